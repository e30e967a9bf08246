"""The driver of an agent loop: when turns start, go on and stop, and the status.

A waking send to an idle agent opens the turn *synchronously* (insert splice, status
``running``, ``turn/start``, claim splices) and only then creates the driver task, so
the caller observes a started turn as soon as ``followup()`` returns. How one turn
runs is :mod:`dsh_agent._engine.turn`. After a ``completed`` or ``max-tokens`` turn the driver
goes on while anything is pending; after ``blocked``, ``error`` or ``aborted`` it
stops, and leftover input waits for the next waking send. A turn whose tool call
waits for approval stays open while the agent is idle; a decision (or a cancel) lets
it go on (:mod:`dsh_agent.approvals`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from dsh_agent._cancellation import CancelScope
from dsh_agent._engine.context import (
    FRESH,
    EngineContext,
    Fresh,
    Regenerate,
    Rerun,
    Resume,
    TurnKind,
)
from dsh_agent._engine.settling import until_one_done
from dsh_agent._engine.step import StepRunner
from dsh_agent._engine.turn import TurnRunner
from dsh_agent._live_updates import AgentStatus, StatusUpdate
from dsh_agent.errors import AgentError
from dsh_llm._attachments import reading_attachments
from dsh_llm._messages import UserMessage
from dsh_session.errors import SessionValidationError
from dsh_session.events import CancelCause, CompletedReason, MaxTokensReason

_log = logging.getLogger("dsh_agent")


class TurnDriver:
    """Starts, resumes and drives the turns of one agent loop, one task at a time."""

    def __init__(self, *, context: EngineContext, steps: StepRunner, turns: TurnRunner) -> None:
        """The driver holds the agent loop (``context.agent``, a weak reference) while a
        turn runs or starts, and only then (see :mod:`dsh_agent._engine.loop_parts`)."""
        self._ctx = context
        self._steps = steps
        self._turns = turns
        self._status: AgentStatus = "idle"
        self._scope: CancelScope | None = None
        """The cancellation scope of the turn being started or run; None when idle."""
        self._task: asyncio.Task[None] | None = None
        self._latched = False
        """A waking send arrived while the turn was aborting: wake again once idle."""
        self._compacting = False
        """``compact_now()`` is running: a waking send waits for it."""
        self._owner: object = None
        """The agent loop while a driver task runs: a running loop stays alive."""

    @property
    def status(self) -> AgentStatus:
        return self._status

    @property
    def scope(self) -> CancelScope | None:
        """The scope of the turn being started or run; None when idle."""
        return self._scope

    @property
    def compacting(self) -> bool:
        return self._compacting

    @property
    def busy(self) -> bool:
        """A turn runs, or waits for approval with its turn open."""
        return self._status != "idle" or self.waiting_turn

    @property
    def waiting_turn(self) -> bool:
        """Idle with the turn open: it waits for approval."""
        return self._task is None and self._ctx.session.open_step is not None

    def _set_status(self, status: AgentStatus) -> None:
        if self._status != status:
            self._status = status
            self._ctx.notify(StatusUpdate(status))

    # --- waiting ---------------------------------------------------------------------------

    async def when_idle(self) -> None:
        """Return once the driver is quiescent (including a turn woken by a latch)."""
        while (task := self._task) is not None:
            self.check_outside_own_turn("when_idle()")
            await until_one_done((task,))

    def check_outside_own_turn(self, what: str) -> None:
        """Refuse to wait for the turn from inside it: it would wait forever."""
        current = asyncio.current_task()
        if self._task is not None and (current is self._task or current in self._steps.tool_tasks):
            raise AgentError(
                f"{what} of agent {self._ctx.session.id!r} was awaited inside its own turn "
                "(a tool or pre-step handler); it would wait forever"
            )

    # --- starting and stopping -------------------------------------------------------------

    def wake(self) -> None:
        """Input arrived that wants a turn: start one, or remember to."""
        if self._compacting:  # the turn starts once compact_now() is done
            self._latched = True
            return
        if self._status == "idle":
            if not self.waiting_turn:  # else the input waits for the turn to go on
                self.start()
            return
        # Running: a live turn finds the input at its next boundary. If the turn is
        # aborting, or has ended and the driver is about to stop, remember the wake.
        scope = self._scope
        aborting = scope is not None and scope.cause is not None
        if (aborting or self._ctx.session.open_turn is None) and not self._disposed():
            self._latched = True

    def check_wake(self) -> None:
        """Refuse, before the input is written, a waking send whose turn could not open:
        a turn this driver does not run is open (another writer appended its
        ``turn/start``)."""
        if self._compacting or self._status != "idle" or self.waiting_turn:
            return
        session = self._ctx.session
        if session.open_turn is not None:
            raise SessionValidationError(
                f"cannot start a turn of agent {session.id!r}: turn {session.open_turn} "
                "is still open, and this agent does not run it",
                seq=len(session.events),
                field="type",
            )

    def forget_wake(self) -> None:
        """The pending input was discarded: a remembered wake has nothing to start."""
        self._latched = False

    def cancel(self, cause: CancelCause) -> None:
        """Abort the running turn with ``cause``, or end the one waiting for approval."""
        scope = self._scope
        if scope is not None:
            scope.cancel(cause)
        elif self.waiting_turn:
            self._resume(cause)

    def go_on(self) -> None:
        """A decision was recorded: resume the waiting turn unless its next call still
        waits."""
        if self._status == "idle" and self.waiting_turn and not self._ctx.approvals.blocked:
            self._resume()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """While ``compact_now()`` runs: a waking send starts its turn afterwards."""
        self._compacting = True
        try:
            yield
        finally:
            self._compacting = False
            if self._latched and self._ctx.inbox.has_pending and not self._ctx.closed():
                self._latched = False
                self.start()

    def _disposed(self) -> bool:
        scope = self._scope
        return scope is not None and scope.cause is not None and scope.cause.kind == "disposed"

    def start(self, kind: Fresh | Rerun | Regenerate = FRESH) -> None:
        """Open a turn of ``kind`` synchronously, then hand it to a new driver task."""
        scope = self._scope = CancelScope()
        self._latched = False
        self._set_status("running")
        if scope.cause is not None:  # cancelled by a status observer: no turn opens
            self._scope = None
            self._set_status("idle")
            return
        try:
            turn, claimed = self._turns.open(kind)
        except BaseException:  # no turn opened: the agent stays idle, not running
            self._scope = None
            self._set_status("idle")
            raise
        retries = self._ctx.retries
        if retries is not None:
            retries.carry(turn, kind.target.remaining if isinstance(kind, Rerun) else None)
        driving = self._drive(scope, turn, claimed, kind)
        self._task = asyncio.get_running_loop().create_task(driving)
        self._owner = self._ctx.agent()

    def _resume(self, cause: CancelCause | None = None) -> None:
        """Drive the turn that waited for approval on from its open step."""
        turn, step = self._ctx.session.open_turn, self._ctx.session.open_step
        assert turn is not None and step is not None
        scope = self._scope = CancelScope()
        if cause is not None:
            scope.cancel(cause)
        self._set_status("running")
        drive = self._drive(scope, turn, (), Resume(step))
        self._task = asyncio.get_running_loop().create_task(drive)
        self._owner = self._ctx.agent()

    async def _drive(
        self,
        scope: CancelScope,
        turn: int,
        claimed: tuple[UserMessage, ...],
        kind: TurnKind,
    ) -> None:
        reader = self._ctx.attachments
        try:
            while True:
                with nullcontext() if reader is None else reading_attachments(reader):
                    reason = await self._turns.run(scope, turn, claimed, kind)
                if (
                    scope.cause is not None
                    or not isinstance(reason, CompletedReason | MaxTokensReason)
                    or not self._ctx.inbox.has_pending
                ):
                    break
                scope = self._scope = CancelScope()
                self._latched = False
                kind = FRESH
                turn, claimed = self._turns.open(kind)
        except Exception:
            _log.exception("agent %s: the loop failed and stopped", self._ctx.session.id)
        finally:
            self._become_idle()
        if scope.external:
            raise asyncio.CancelledError

    def _become_idle(self) -> None:
        self._task = None
        self._scope = None
        wake = self._latched and self._ctx.inbox.has_pending and not self._ctx.closed()
        self._latched = False
        self._set_status("idle")
        if self._status == "idle" and not self._ctx.closed():
            if self.waiting_turn:
                if not self._ctx.approvals.blocked:  # decided while the driver was stopping
                    self._resume()
            elif wake:
                self.start()
        if self._task is None:  # idle: the loop is its program's to keep or to drop
            self._owner = None


__all__ = [
    "TurnDriver",
]
