"""The agent loop: one session's deliveries, verbs and closing, over its parts.

Deliveries go to the durable inbox (:mod:`dsh_agent.inbox`); when turns start, go on
and stop is :mod:`dsh_agent._engine.driver`, how one turn runs :mod:`dsh_agent._engine.turn`. A turn
whose tool call waits for approval stays open while the agent is idle; ``approve`` /
``deny`` (or ``cancel``) let it go on (:mod:`dsh_agent.approvals`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Self, TypeVar

from dsh_agent._agent import PreStepHandler
from dsh_agent._cancellation import CancelCauseInput, as_cancel_cause
from dsh_agent._config import DEFAULT_RETRY, NO_SETTINGS, AgentConfig, choose_model
from dsh_agent._engine.branching import (
    Regeneration,
    answer_to_last_prompt,
    check_idle,
    fork_before,
    plan_edit,
    start_branch,
)
from dsh_agent._engine.context import Regenerate, Rerun
from dsh_agent._engine.loop_parts import ClosedFlag, LoopWiring, build_parts
from dsh_agent._engine.run_header import overridden
from dsh_agent._engine.session_claims import claim, release
from dsh_agent._live_updates import AgentStatus, InboxTarget, LiveUpdateObserver, Notifier
from dsh_agent._model_settings import ModelSettings
from dsh_agent._run_options import RunPrompt
from dsh_agent._usage import UsageLimits
from dsh_agent.approvals._gate import PendingApproval
from dsh_agent.approvals._policy import ApprovalPolicy
from dsh_agent.compaction._config import Compaction
from dsh_agent.compaction._engine import CompactionResult
from dsh_agent.errors import AgentClosedError, AgentError
from dsh_agent.inbox import Inbox, check_target
from dsh_agent.retry._chain import retry_target
from dsh_agent.retry._policy import RetryPolicy
from dsh_agent.streaming._stream import DEFAULT_MAX_PENDING, UpdateStream, run_stream
from dsh_agent.tools import Tool
from dsh_llm import CallId, ContentInput
from dsh_llm._ids import MessageId
from dsh_llm._messages import UserMessage
from dsh_llm._request import ModelAdapter
from dsh_session._header import SessionId
from dsh_session._session import Session

if TYPE_CHECKING:
    from dsh_session.stores import SessionStore

DepsT = TypeVar("DepsT")


class AgentLoop:
    """An asyncio agent over one session: the :class:`~dsh_agent._agent.Agent` surface.

    Deliveries (``followup``, ``steer``, ``inject``) take the caller's complete
    ``UserMessage`` and keep that very object through the inbox, the live updates,
    pre-step, the ``user/message`` event, derived history and the model request.
    """

    def __init__(
        self,
        *,
        session: Session,
        adapter: ModelAdapter | None = None,
        provider: str | None = None,
        model: str | None = None,
        system: str | None = None,
        tools: Iterable[Tool[DepsT]] = (),
        model_settings: ModelSettings = NO_SETTINGS,
        store: SessionStore | None = None,
        check_requests: bool = False,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        context_window: int | None = None,
        compaction: Compaction | None = None,
        approval: ApprovalPolicy | None = None,
        deps: DepsT | None = None,
        pre_step: Iterable[PreStepHandler] = (),
        usage_limits: UsageLimits | None = None,
        session_usage_limits: UsageLimits | None = None,
    ) -> None:
        """Build a loop over ``session`` (new, or loaded from a store, whose pending
        inbox is restored) with the options of an :class:`AgentConfig` (each one is
        described there; ``from_config`` takes a built one). A bad option raises
        before anything is written.

        Name the model once: ``AgentLoop(session=..., model="openai:gpt-4.1")``
        builds the adapter from a model string; ``AgentLoop(session=...,
        adapter=adapter)`` takes ``provider`` and ``model`` from the adapter. Given
        explicitly beside an adapter, ``provider`` and ``model`` win."""
        adapter, provider, model = choose_model(adapter, provider, model)
        config = AgentConfig(
            adapter=adapter,
            provider=provider,
            model=model,
            system=system,
            tools=tuple(tools),
            model_settings=model_settings,
            store=store,
            check_requests=check_requests,
            retry=retry,
            context_window=context_window,
            compaction=compaction,
            approval=approval,
            deps=deps,
            pre_step=tuple(pre_step),
            usage_limits=usage_limits,
            session_usage_limits=session_usage_limits,
        )
        self._open(session, config)

    @classmethod
    def from_config(cls, *, session: Session, config: AgentConfig[Any]) -> AgentLoop:
        """A loop over ``session`` with the options ``config`` holds."""
        loop = cls.__new__(cls)
        loop._open(session, config)
        return loop

    def _open(self, session: Session, config: AgentConfig[Any]) -> None:
        claim(session, self)  # one loop per session object; released by aclose() or GC
        try:
            self._session, self._config = session, config
            self._closed = ClosedFlag()
            self._observers: list[LiveUpdateObserver] = []
            self._pre_step_handlers: list[PreStepHandler] = list(config.pre_step)
            wiring = LoopWiring(
                agent=weakref.ref(self),
                notify=Notifier(session.id, self._observers),
                pre_step_handlers=self._pre_step_handlers,
                closed=self._closed,
            )
            parts = build_parts(wiring, session, config)
            self._ctx, self._steps, self._driver = parts.context, parts.steps, parts.driver
            if config.store is not None:
                config.store.attach(session)  # attaching the same object again does nothing
        except BaseException:
            release(session, self)
            raise

    @property
    def config(self) -> AgentConfig[Any]:
        """The options this loop was built with (pre-step handlers added later by
        ``on_pre_step`` are not in it)."""
        return self._config

    # --- closing ----------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop driving the session and give it back, so another loop may be built over
        it. A running turn is aborted with cause ``disposed`` (pending input stays in
        the durable inbox, for the next loop); once the driver is idle the log is
        flushed to the store, if any. Later deliveries, cancels and inbox changes
        raise :class:`AgentClosedError`. Closing again does nothing more. A loop that
        is garbage-collected gives its session back too."""
        self._driver.check_outside_own_turn("aclose()")
        self._closed.closed = True
        try:
            scope = self._driver.scope
            if scope is not None:
                scope.cancel(as_cancel_cause("disposed"))
            await self.when_idle()
            await self._flush()
        finally:
            self._ctx.inbox.close()
            release(self._session, self)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def closed(self) -> bool:
        """True once :meth:`aclose` was called."""
        return self._closed.closed

    def _check_open(self) -> None:
        if self._closed.closed:
            raise AgentClosedError(
                f"the agent loop of session {self.id!r} is closed", session_id=self.id
            )

    # --- the Agent surface -------------------------------------------------------------

    @property
    def session(self) -> Session:
        return self._session

    @property
    def inbox(self) -> Inbox:
        return self._ctx.inbox

    @property
    def id(self) -> SessionId:
        """The agent's identity: its session's id."""
        return self._session.id

    @property
    def status(self) -> AgentStatus:
        return self._driver.status

    def send(self, message: UserMessage, target: InboxTarget, wakeup: bool) -> None:
        """Deliver ``message`` (imported as is, its id kept) to ``target``. A waking send
        to an idle agent starts a turn before returning; one that arrives while a turn
        is aborting goes to next-turn and runs once that turn has closed. A message
        whose id is already pending raises :class:`InboxError` and changes nothing."""
        self._check_open()
        target = check_target(target)
        if wakeup:
            asyncio.get_running_loop()  # a turn needs a loop: fail before writing anything
            self._driver.check_wake()  # a turn that cannot open: refuse before writing
            scope = self._driver.scope
            if scope is not None and scope.cause is not None:
                target = "next-turn"
        self._ctx.inbox.append(target, message)
        if wakeup:
            self._driver.wake()

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
        if self._driver.busy:
            raise AgentError(f"agent {self.id!r} is running a turn: retry() needs it idle")
        target = retry_target(self._session.events)
        asyncio.get_running_loop()  # a turn needs a loop: fail before writing anything
        self._driver.start(Rerun(target))

    def cancel(self, cause: CancelCauseInput = "user", *, keep_inbox: bool = False) -> None:
        """Abort the running turn with ``cause`` (the first cause wins). Unless
        ``keep_inbox``, everything pending is discarded first (durably). Cancelling
        an idle agent only clears the inbox."""
        self._check_open()
        cancel_cause = as_cancel_cause(cause)
        if not keep_inbox:
            self._ctx.inbox.clear()
            self._driver.forget_wake()
        self._driver.cancel(cancel_cause)

    async def when_idle(self) -> None:
        """Return once the driver is quiescent (including a turn woken by a latch)."""
        await self._driver.when_idle()

    def subscribe(self, observer: LiveUpdateObserver) -> Callable[[], None]:
        """Call ``observer`` with every live update, synchronously and in order;
        an observer that raises is logged and does not stop the others. Returns the
        function that unsubscribes it."""
        self._observers.append(observer)

        def unsubscribe() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return unsubscribe

    def stream(
        self,
        message: RunPrompt,
        *,
        max_pending: int = DEFAULT_MAX_PENDING,
        merge_deltas: bool = True,
    ) -> UpdateStream:
        """Send ``message`` (a ``UserMessage``, or text or content blocks from which one
        is created) as a followup and stream the typed updates until idle; see
        :func:`dsh_agent.streaming.run_stream`."""
        return run_stream(self, message, max_pending=max_pending, merge_deltas=merge_deltas)

    async def compact_now(self) -> CompactionResult | None:
        """Summarize all but the last unit now, between turns (needs ``compaction=``);
        a send meanwhile starts its turn afterwards. ``None`` when there is nothing to
        summarize; a failure raises ``CompactionError`` and changes no surface."""
        self._check_open()
        if self._driver.busy or self._driver.compacting:
            raise AgentError(f"compact_now() needs agent {self.id!r} idle, not compacting")
        with self._driver.paused():
            result = await self._ctx.window.compact_now()
            await self._flush()
            return result

    # --- approvals ---------------------------------------------------------------------

    @property
    def pending_approvals(self) -> tuple[PendingApproval, ...]:
        """The tool calls waiting for a person's decision, in model order."""
        return self._ctx.approvals.pending

    async def approve(self, call_id: CallId) -> None:
        """Let the waiting call ``call_id`` run once; durable when this returns."""
        await self._decide(lambda: self._ctx.approvals.approve(call_id))

    async def deny(self, call_id: CallId, reason: str | None = None) -> None:
        """Refuse the waiting call ``call_id``: the model gets an error result naming
        ``reason``; durable when this returns."""
        await self._decide(lambda: self._ctx.approvals.deny(call_id, reason))

    async def _decide(self, record: Callable[[], None]) -> None:
        """Record a decision (an unknown or decided call raises ``ApprovalError``),
        flush it, and drive the turn on when its next call no longer waits."""
        self._check_open()
        record()
        await self._flush()
        self._driver.go_on()

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
        if self.status != "idle":
            raise AgentError(
                f"agent {self.id!r} is {self.status}: request overrides apply from an "
                "idle agent (wait for when_idle() first)"
            )
        base_header, base_tools = self._steps.header, self._steps.tools
        self._steps.configure(*overridden(base_header, base_tools, settings, tools))
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

    # --- regenerate and edit (dsh_agent._engine.branching) ----------------------------------------

    def regenerate(self) -> None:
        """Start a turn that answers the last prompt again: the last answer and its tool
        exchange leave the surface through one replace (the raw log keeps them). Raises
        :class:`~dsh_agent.errors.BranchError`, writing nothing, when there is no
        prompt, a turn runs or input is pending."""
        self._check_open()
        check_idle(self._session, self._driver.busy, self._pending(), "regenerate")
        answer_to_last_prompt(self._session)
        asyncio.get_running_loop()  # a turn needs a loop: fail before writing anything
        regeneration = Regeneration(self._session, self._config.provider, self._config.model)
        self._driver.start(Regenerate(regeneration))

    async def edit(self, message_id: MessageId | str, content: ContentInput) -> AgentLoop:
        """Change the prompt ``message_id`` to ``content``: a new message with a new id
        (``source.editOf`` names the old one), sent on a fork of the session cut before
        the prompt's turn. Returns the branch's new, running agent loop (built like this
        one, on the same store); this loop and its session are left as they are."""
        self._check_open()
        check_idle(self._session, self._driver.busy, self._pending(), "edit")
        plan = plan_edit(self._session, message_id)
        edited = plan.edited(content)
        config = replace(self._config, pre_step=tuple(self._pre_step_handlers))
        fork = fork_before(self._session, plan.boundary)
        branch = AgentLoop.from_config(session=fork, config=config)
        await start_branch(branch, config.store, plan, edited)
        return branch

    def _pending(self) -> int:
        inbox = self._ctx.inbox
        return len(inbox.next_step) + len(inbox.next_turn)

    # --- durability ---------------------------------------------------------------------

    async def _flush(self) -> None:
        store = self._config.store
        if store is not None:
            await store.flush(self._session)


__all__ = [
    "AgentLoop",
]
