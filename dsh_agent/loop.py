"""The agent loop: delivery, closing, and the driver task that runs turn after turn.

A waking send to an idle agent opens the turn *synchronously* (insert splice, status
``running``, ``turn/start``, claim splices) and only then creates the driver task, so
the caller observes a started turn as soon as ``followup()`` returns. How one turn
runs is :mod:`dsh_agent.turn`. After a ``completed`` or ``max-tokens`` turn the driver
goes on while anything is pending; after ``blocked``, ``error`` or ``aborted`` it
stops, and leftover input waits for the next waking send. A turn whose tool call
waits for approval stays open while the agent is idle; ``approve`` / ``deny`` (or
``cancel``) let it go on (:mod:`dsh_agent.approvals`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Self, TypeVar

from dsh_agent.approvals.gate import ApprovalGate, PendingApproval
from dsh_agent.approvals.policy import ApprovalPolicy
from dsh_agent.branching import (
    ContentInput,
    Regeneration,
    answer_to_last_prompt,
    check_idle,
    fork_before,
    plan_edit,
    start_branch,
)
from dsh_agent.cancellation import CancelCauseInput, CancelScope, as_cancel_cause
from dsh_agent.compaction.config import Compaction
from dsh_agent.compaction.engine import CompactionResult
from dsh_agent.compaction.hook import ContextHook
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
from dsh_agent.retry.chain import RetryTarget, retry_target
from dsh_agent.retry.policy import RetryPolicy
from dsh_agent.retry.scheduler import RetryScheduler
from dsh_agent.session_claims import claim, release
from dsh_agent.step import Prelude, StepRunner
from dsh_agent.streaming.stream import DEFAULT_MAX_PENDING, UpdateStream, run_stream
from dsh_agent.tools import Tool
from dsh_agent.turn import TurnRunner
from dsh_llm.ids import MessageId
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

DEFAULT_RETRY = RetryPolicy()
"""Retries are on unless ``retry=None``: 5, from 500 ms to 10 s, 10 % jitter."""


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
        retry: RetryPolicy | None = DEFAULT_RETRY,
        context_window: int | None = None,
        compaction: Compaction | None = None,
        approval: ApprovalPolicy | None = None,
        deps: DepsT | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: Sequence[str] | None = None,
        reasoning_effort: str | None = None,
    ) -> None:
        """Build a loop over ``session`` (new, or loaded from a store, whose pending
        inbox is restored). With ``store``, the session is attached to it and flushed
        at every checkpoint. ``check_requests`` compares each live request with its
        reconstruction from the log before sending it. ``retry`` says which failed
        model attempts are tried again, logged (``None``: none). ``context_window``
        (default: ``KNOWN_CONTEXT_WINDOWS``) is logged as ``request/context``;
        ``compaction`` keeps the requests below it. ``approval`` asks for approval of
        more calls than the tools that declare ``requires_approval``. ``deps`` reaches
        every tool as ``ToolContext.deps``; mypy checks it against the
        ``ToolContext[Deps]`` the tools declare. ``temperature``, ``top_p``, ``stop``
        and ``reasoning_effort`` (like ``max_tokens``) go into the request header;
        ``None`` leaves the provider's default. ``run(..., settings=...)`` overrides
        them for one run."""
        # Every keyword but the session, so that an edit's branch is built alike.
        options = {name: value for name, value in locals().items() if name != "self"}
        del options["session"]
        claim(session, self)  # one loop per session object; released by aclose() or GC
        try:
            tools = tuple(tools)
            indexed = _index_tools(tools)
            gate = ApprovalGate(session, indexed, approval)
            if session.open_turn is not None and not gate.pending:
                raise AgentError(
                    f"session {session.id!r} has turn {session.open_turn} open; an agent "
                    "loop needs a session with no open turn (loading it from a store closes "
                    "it), or one whose turn waits for approval"
                )
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
            context = ContextHook(
                session=session,
                adapter=adapter,
                header=header,
                policy=compaction,
                context_window=context_window,
            )
            self._build(
                session, adapter, indexed, header, store, check_requests, retry, context, gate, deps
            )
            self._options: dict[str, Any] = {**options, "tools": tools}
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
        retry: RetryPolicy | None,
        context: ContextHook,
        gate: ApprovalGate,
        deps: object,
    ) -> None:
        self._session = session
        self._context = context
        self._compacting = False
        """``compact_now()`` is running: a waking send waits for it."""
        self._approvals = gate
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
        self._retries = (
            None
            if retry is None
            else RetryScheduler(session=session, policy=retry, checkpoint=self._checkpoint)
        )
        self._steps = StepRunner(
            session=session,
            adapter=adapter,
            tools=tools,
            header=header,
            inbox=self._inbox,
            checkpoint=self._checkpoint,
            check_requests=check_requests,
            notify=self._notify,
            retry=self._retries,
            context=context,
            approvals=gate,
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
            context=context,
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

    def retry(self) -> None:
        """Run the failed last turn again over the same history, in a new turn that
        claims no input (see dsh_agent/README.md, "Failures and retries"); started
        before returning. Raises :class:`NothingToRetryError` when the last turn did
        not fail, :class:`AgentError` while a turn runs; both write nothing."""
        self._check_open()
        if self._busy():
            raise AgentError(f"agent {self.id!r} is running a turn: retry() needs it idle")
        target = retry_target(self._session.events)
        asyncio.get_running_loop()  # a turn needs a loop: fail before writing anything
        self._start_driver(again=target)

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
        elif self._waiting_turn():
            self._resume(cancel_cause)

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

    async def compact_now(self) -> CompactionResult | None:
        """Summarize all but the last unit now, between turns (needs ``compaction=``);
        a send meanwhile starts its turn afterwards. ``None`` when there is nothing to
        summarize; a failure raises ``CompactionError`` and changes no surface."""
        self._check_open()
        if self._busy() or self._compacting:
            raise AgentError(f"compact_now() needs agent {self.id!r} idle, not compacting")
        self._compacting = True
        try:
            result = await self._context.compact_now()
            if self._store is not None:
                await self._store.flush(self._session)
            return result
        finally:
            self._compacting = False
            if self._latched and self._inbox.has_pending and not self._closed:
                self._latched = False
                self._start_driver()

    # --- approvals ---------------------------------------------------------------------

    @property
    def pending_approvals(self) -> tuple[PendingApproval, ...]:
        """The tool calls waiting for a person's decision, in model order."""
        return self._approvals.pending

    async def approve(self, call_id: str) -> None:
        """Let the waiting call ``call_id`` run once; durable when this returns."""
        await self._decide(lambda: self._approvals.approve(call_id))

    async def deny(self, call_id: str, reason: str | None = None) -> None:
        """Refuse the waiting call ``call_id``: the model gets an error result naming
        ``reason``; durable when this returns."""
        await self._decide(lambda: self._approvals.deny(call_id, reason))

    async def _decide(self, record: Callable[[], None]) -> None:
        """Record a decision (an unknown or decided call raises ``ApprovalError``),
        flush it, and drive the turn on when its next call no longer waits."""
        self._check_open()
        record()
        if self._store is not None:
            await self._store.flush(self._session)
        if self._status == "idle" and self._waiting_turn() and not self._approvals.blocked:
            self._resume()

    # --- per-run request overrides ---------------------------------------------------------

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

    # --- regenerate and edit (dsh_agent.branching) ----------------------------------------

    def regenerate(self) -> None:
        """Start a turn that answers the last prompt again: the last answer and its tool
        exchange leave the surface through one replace (the raw log keeps them). Raises
        :class:`~dsh_agent.branching.BranchError`, writing nothing, when there is no
        prompt, a turn runs or input is pending."""
        self._check_open()
        check_idle(self._session, self._busy(), self._pending(), "regenerate")
        answer_to_last_prompt(self._session)
        asyncio.get_running_loop()  # a turn needs a loop: fail before writing anything
        provider, model = self._options["provider"], self._options["model"]
        self._start_driver(prelude=Regeneration(self._session, provider, model))

    async def edit(self, message_id: MessageId | str, content: ContentInput) -> AgentLoop:
        """Change the prompt ``message_id`` to ``content``: a new message with a new id
        (``source.editOf`` names the old one), sent on a fork of the session cut before
        the prompt's turn. Returns the branch's new, running agent loop (built like this
        one, on the same store); this loop and its session are left as they are."""
        self._check_open()
        check_idle(self._session, self._busy(), self._pending(), "edit")
        plan = plan_edit(self._session, message_id)
        edited = plan.edited(content)
        branch = AgentLoop(session=fork_before(self._session, plan.boundary), **self._options)
        for handler in self._pre_step_handlers:
            branch.on_pre_step(handler)
        await start_branch(branch, self._store, plan, edited)
        return branch

    def _pending(self) -> int:
        return len(self._inbox.next_step) + len(self._inbox.next_turn)

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
        if self._compacting:  # the turn starts once compact_now() is done
            self._latched = True
            return
        if self._status == "idle":
            if not self._waiting_turn():  # else the input waits for the turn to go on
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

    def _start_driver(
        self, again: RetryTarget | None = None, prelude: Prelude | None = None
    ) -> None:
        """Open a turn synchronously, then hand it to a new driver task. ``again``:
        the turn runs the failed last one again and claims no input; ``prelude``: run
        at its first step (see :data:`Prelude`)."""
        scope = self._scope = CancelScope()
        self._latched = False
        self._set_status("running")
        if scope.cause is not None:  # cancelled by a status observer: no turn opens
            self._scope = None
            self._set_status("idle")
            return
        turn, claimed = self._turns.open(claim=again is None)
        if self._retries is not None:
            self._retries.carry(turn, None if again is None else again.remaining)
        driving = self._drive(scope, turn, claimed, again=again is not None, prelude=prelude)
        self._driver = asyncio.get_running_loop().create_task(driving)

    def _busy(self) -> bool:
        """A turn runs, or waits for approval with its turn open."""
        return self._status != "idle" or self._waiting_turn()

    def _waiting_turn(self) -> bool:
        """Idle with the turn open: it waits for approval."""
        return self._driver is None and self._session.open_step is not None

    def _resume(self, cause: CancelCauseInput | None = None) -> None:
        """Drive the turn that waited for approval on from its open step."""
        turn, step = self._session.open_turn, self._session.open_step
        assert turn is not None and step is not None
        scope = self._scope = CancelScope()
        if cause is not None:
            scope.cancel(as_cancel_cause(cause))
        self._set_status("running")
        drive = self._drive(scope, turn, (), resume_step=step)
        self._driver = asyncio.get_running_loop().create_task(drive)

    async def _drive(
        self,
        scope: CancelScope,
        turn: int,
        claimed: tuple[UserMessage, ...],
        *,
        again: bool = False,
        prelude: Prelude | None = None,
        resume_step: int | None = None,
    ) -> None:
        try:
            while True:
                reason = await self._turns.run(
                    scope, turn, claimed, again=again, prelude=prelude, resume_step=resume_step
                )
                again = False
                prelude = None
                resume_step = None
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
        if self._status != "idle" or self._closed:
            return
        if self._waiting_turn():
            if not self._approvals.blocked:  # decided while the driver was stopping
                self._resume()
        elif wake:
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
