"""The agent loop: delivery, closing, and the driver task that runs turn after turn.

A waking send to an idle agent opens the turn *synchronously* (insert splice, status
``running``, ``turn/start``, claim splices) and only then creates the driver task, so
the caller observes a started turn as soon as ``followup()`` returns. How one turn
runs is :mod:`dsh_agent.turn`. After a ``completed`` or ``max-tokens`` turn the driver
goes on while anything is pending; after ``blocked``, ``error`` or ``aborted`` it
stops, and leftover input waits for the next waking send.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Self, TypeVar

from dsh_agent.cancellation import CancelCauseInput, CancelScope, as_cancel_cause
from dsh_agent.errors import AgentClosedError, AgentError
from dsh_agent.inbox import Inbox, check_target
from dsh_agent.model_settings import ModelSettings
from dsh_agent.notifications import (
    AgentStatus,
    InboxTarget,
    Notification,
    NotificationObserver,
    StatusChanged,
)
from dsh_agent.prestep import PreStepHandler
from dsh_agent.session_claims import claim, release
from dsh_agent.step import StepRunner
from dsh_agent.streaming.stream import DEFAULT_MAX_PENDING, UpdateStream, run_stream
from dsh_agent.tools import Tool
from dsh_agent.turn import TurnRunner
from dsh_llm.messages import UserMessage
from dsh_llm.request import ModelAdapter
from dsh_session.events import (
    CompletedReason,
    MaxTokensReason,
    RequestConfig,
    RequestHeader,
)
from dsh_session.header import SessionId
from dsh_session.session import Session

if TYPE_CHECKING:
    from dsh_session.stores import SessionStore

_log = logging.getLogger("dsh_agent")


DepsT = TypeVar("DepsT")


def _index_tools(tools: Iterable[Tool]) -> dict[str, Tool]:
    indexed: dict[str, Tool] = {}
    for offered in tools:
        if offered.name in indexed:
            raise ValueError(f"two tools are named {offered.name!r}; tool names must be unique")
        indexed[offered.name] = offered
    return indexed


class AgentLoop:
    """An asyncio agent over one session: the :class:`~dsh_agent.agent.Agent` surface.

    Deliveries (``followup``, ``steer``, ``inject``) take the caller's complete
    ``UserMessage`` and keep that very object through the inbox, the notifications,
    pre-step, the ``user/message`` event, derived history and the model request.
    """

    def __init__(
        self,
        *,
        session: Session,
        adapter: ModelAdapter,
        provider: str,
        model: str,
        system: str | None = None,
        tools: Iterable[Tool[DepsT]] = (),
        store: SessionStore | None = None,
        max_tokens: int | None = None,
        check_requests: bool = False,
        deps: DepsT | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: Sequence[str] | None = None,
        reasoning_effort: str | None = None,
    ) -> None:
        """Build a loop over ``session`` (new, or loaded from a store, whose pending
        inbox is restored). With ``store``, the session is attached to it and flushed
        at every checkpoint. ``check_requests`` compares each live request with its
        reconstruction from the log before sending it. ``deps`` reaches every tool as
        ``ToolContext.deps``; mypy checks it against the ``ToolContext[Deps]`` the tools
        declare. ``temperature``, ``top_p``, ``stop`` and ``reasoning_effort`` (like
        ``max_tokens``) go into the request header; ``None`` leaves the provider's
        default. ``run(..., settings=...)`` overrides them for one run."""
        claim(session, self)  # one loop per session object; released by aclose() or GC
        try:
            if session.open_turn is not None:
                raise AgentError(
                    f"session {session.id!r} has turn {session.open_turn} open; an agent "
                    "loop needs a session with no open turn (loading it from a store closes it)"
                )
            tools = tuple(tools)
            settings = ModelSettings(
                temperature=temperature,
                top_p=top_p,
                stop=None if stop is None else tuple(stop),
                reasoning_effort=reasoning_effort,
                max_tokens=max_tokens,
            )
            header = RequestHeader(
                config=settings.applied_to(RequestConfig(provider=provider, model=model)),
                system=system or None,
                tools=tuple(offered.schema() for offered in tools) or None,
            )
            self._build(session, adapter, _index_tools(tools), header, store, check_requests, deps)
        except BaseException:
            release(session, self)
            raise

    def _build(
        self,
        session: Session,
        adapter: ModelAdapter,
        tools: dict[str, Tool],
        header: RequestHeader,
        store: SessionStore | None,
        check_requests: bool,
        deps: object,
    ) -> None:
        self._session = session
        self._store = store
        self._closed = False
        self._observers: list[NotificationObserver] = []
        self._pre_step_handlers: list[PreStepHandler] = []
        self._status: AgentStatus = "idle"
        self._scope: CancelScope | None = None
        """The cancellation scope of the turn being started or run; None when idle."""
        self._driver: asyncio.Task[None] | None = None
        self._latched = False
        """A waking send arrived while the turn was aborting: wake again once idle."""
        self._inbox = Inbox(session, self._notify)
        self._steps = StepRunner(
            session=session,
            adapter=adapter,
            tools=tools,
            header=header,
            inbox=self._inbox,
            checkpoint=self._checkpoint,
            check_requests=check_requests,
            notify=self._notify,
            deps=deps,
        )
        self._turns = TurnRunner(
            agent=self,
            session=session,
            inbox=self._inbox,
            steps=self._steps,
            pre_step_handlers=self._pre_step_handlers,
            checkpoint=self._checkpoint,
            notify=self._notify,
        )
        if store is not None:
            store.attach(session)  # attaching the same object again does nothing

    # --- closing ----------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop driving the session and give it back, so another loop may be built over
        it. A running turn is aborted with cause ``disposed`` (pending input stays in
        the durable inbox, for the next loop); once the driver is idle the log is
        flushed to the store, if any. Later deliveries, cancels and inbox changes
        raise :class:`AgentClosedError`. Closing again does nothing more. A loop that
        is garbage-collected gives its session back too."""
        self._check_outside_own_turn("aclose()")
        self._closed = True
        try:
            scope = self._scope
            if scope is not None:
                scope.cancel(as_cancel_cause("disposed"))
            await self.when_idle()
            if self._store is not None:
                await self._store.flush(self._session)
        finally:
            self._inbox.close()
            release(self._session, self)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def closed(self) -> bool:
        """True once :meth:`aclose` was called."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise AgentClosedError(
                f"the agent loop of session {self.id!r} is closed", session_id=self.id
            )

    # --- the Agent surface -------------------------------------------------------------

    @property
    def session(self) -> Session:
        return self._session

    @property
    def inbox(self) -> Inbox:
        return self._inbox

    @property
    def id(self) -> SessionId:
        """The agent's identity: its session's id."""
        return self._session.id

    @property
    def status(self) -> AgentStatus:
        return self._status

    def send(self, message: UserMessage, target: InboxTarget, wakeup: bool) -> None:
        """Deliver ``message`` (imported as is, its id kept) to ``target``. A waking send
        to an idle agent starts a turn before returning; one that arrives while a turn
        is aborting goes to next-turn and runs once that turn has closed. A message
        whose id is already pending raises :class:`InboxError` and changes nothing."""
        self._check_open()
        target = check_target(target)
        if wakeup:
            asyncio.get_running_loop()  # a turn needs a loop: fail before writing anything
            scope = self._scope
            if scope is not None and scope.cause is not None:
                target = "next-turn"
        self._inbox.append(target, message)
        if wakeup:
            self._wake()

    def followup(self, message: UserMessage) -> None:
        """Queue ``message`` for a turn of its own and wake the agent."""
        self.send(message, "next-turn", True)

    def steer(self, message: UserMessage) -> None:
        """Put ``message`` into the next step and wake the agent."""
        self.send(message, "next-step", True)

    def inject(self, message: UserMessage) -> None:
        """Put ``message`` into the next step without waking the agent."""
        self.send(message, "next-step", False)

    def cancel(self, cause: CancelCauseInput = "user", *, keep_inbox: bool = False) -> None:
        """Abort the running turn with ``cause`` (the first cause wins). Unless
        ``keep_inbox``, everything pending is discarded first (durably). Cancelling
        an idle agent only clears the inbox."""
        self._check_open()
        cancel_cause = as_cancel_cause(cause)
        if not keep_inbox:
            self._inbox.clear()
            self._latched = False
        scope = self._scope
        if scope is not None:
            scope.cancel(cancel_cause)

    async def when_idle(self) -> None:
        """Return once the driver is quiescent (including a turn woken by a latch)."""
        while (driver := self._driver) is not None:
            self._check_outside_own_turn("when_idle()")
            await asyncio.wait((driver,))

    def _check_outside_own_turn(self, what: str) -> None:
        current = asyncio.current_task()
        if self._driver is not None and (
            current is self._driver or current in self._steps.tool_tasks
        ):
            raise AgentError(
                f"{what} of agent {self.id!r} was awaited inside its own turn "
                "(a tool or pre-step handler); it would wait forever"
            )

    def subscribe(self, observer: NotificationObserver) -> Callable[[], None]:
        """Call ``observer`` with every live notification, synchronously and in order;
        an observer that raises is logged and does not stop the others. Returns the
        function that unsubscribes it."""
        self._observers.append(observer)

        def unsubscribe() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return unsubscribe

    def stream(
        self,
        message: UserMessage,
        *,
        max_pending: int = DEFAULT_MAX_PENDING,
        merge_deltas: bool = True,
    ) -> UpdateStream:
        """Send ``message`` as a followup and stream the typed updates until idle; see
        :func:`dsh_agent.streaming.run_stream`."""
        return run_stream(self, message, max_pending=max_pending, merge_deltas=merge_deltas)

    @contextmanager
    def request_overrides(
        self, settings: ModelSettings | None = None, tools: Iterable[Tool] = ()
    ) -> Iterator[None]:
        """Within the block, requests use ``settings`` over the loop's and offer
        ``tools`` besides its own (each change logged as a ``request/header``, so the
        requests stay reconstructable); on leaving, the loop's header comes back for
        the next request. The agent must be idle on entry: this is how ``run(...,
        settings=..., output_type=...)`` scopes its options to its own turns."""
        self._check_open()
        if self._status != "idle":
            raise AgentError(
                f"agent {self.id!r} is {self._status}: request overrides apply from an "
                "idle agent (wait for when_idle() first)"
            )
        base_header, base_tools = self._steps.header, self._steps.tools
        extra = tuple(tools)
        merged = _index_tools((*base_tools.values(), *extra))
        config = (settings or ModelSettings()).applied_to(base_header.config)
        schemas = (*(base_header.tools or ()), *(t.schema() for t in extra))
        header = RequestHeader(
            config=config,
            adapter_defaults=base_header.adapter_defaults,
            system=base_header.system,
            tools=schemas or None,
        )
        self._steps.configure(header, merged)
        try:
            yield
        finally:
            self._steps.configure(base_header, base_tools)

    def on_pre_step(self, handler: PreStepHandler) -> Callable[[], None]:
        """Add a pre-step handler (the first added is the outermost). Returns the
        function that removes it."""
        self._pre_step_handlers.append(handler)

        def remove() -> None:
            if handler in self._pre_step_handlers:
                self._pre_step_handlers.remove(handler)

        return remove

    # --- notifications and status --------------------------------------------------------

    def _notify(self, notification: Notification) -> None:
        for observer in tuple(self._observers):
            try:
                observer(notification)
            except Exception:
                _log.exception("agent %s: a notification observer failed", self.id)

    def _set_status(self, status: AgentStatus) -> None:
        if self._status != status:
            self._status = status
            self._notify(StatusChanged(status))

    # --- the driver ------------------------------------------------------------------------

    def _wake(self) -> None:
        if self._status == "idle":
            self._start_driver()
            return
        # Running: a live turn finds the input at its next boundary. If the turn is
        # aborting, or has ended and the driver is about to stop, remember the wake.
        scope = self._scope
        aborting = scope is not None and scope.cause is not None
        if (aborting or self._session.open_turn is None) and not self._disposed():
            self._latched = True

    def _disposed(self) -> bool:
        scope = self._scope
        return scope is not None and scope.cause is not None and scope.cause.kind == "disposed"

    def _start_driver(self) -> None:
        """Open a turn synchronously, then hand it to a new driver task."""
        scope = self._scope = CancelScope()
        self._latched = False
        self._set_status("running")
        if scope.cause is not None:  # cancelled by a status observer: no turn opens
            self._scope = None
            self._set_status("idle")
            return
        turn, claimed = self._turns.open()
        self._driver = asyncio.get_running_loop().create_task(self._drive(scope, turn, claimed))

    async def _drive(self, scope: CancelScope, turn: int, claimed: tuple[UserMessage, ...]) -> None:
        try:
            while True:
                reason = await self._turns.run(scope, turn, claimed)
                if (
                    scope.cause is not None
                    or not isinstance(reason, CompletedReason | MaxTokensReason)
                    or not self._inbox.has_pending
                ):
                    break
                scope = self._scope = CancelScope()
                self._latched = False
                turn, claimed = self._turns.open()
        except Exception:
            _log.exception("agent %s: the loop failed and stopped", self.id)
        finally:
            self._become_idle()
        if scope.external:
            raise asyncio.CancelledError

    def _become_idle(self) -> None:
        self._driver = None
        self._scope = None
        wake = self._latched and self._inbox.has_pending and not self._closed
        self._latched = False
        self._set_status("idle")
        if wake and self._status == "idle":
            self._start_driver()

    # --- durability ---------------------------------------------------------------------

    async def _checkpoint(self, scope: CancelScope) -> None:
        """Make everything appended so far durable, when a store is attached."""
        if self._store is None:
            return
        try:
            await self._store.flush(self._session)
        except asyncio.CancelledError:
            scope.cancel_from_outside()
