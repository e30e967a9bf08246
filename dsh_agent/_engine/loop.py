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
from typing import TYPE_CHECKING, Any, Self, TypeVar, Unpack, overload

from dsh_agent._agent import PreStepHandler
from dsh_agent._cancellation import CancelCauseInput, as_cancel_cause
from dsh_agent._config import NO_SETTINGS, AgentConfig, LoopOptions, loop_config
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
from dsh_agent._engine.opening import LoopOpening, StoreLease, open_loop, store_of
from dsh_agent._engine.session_claims import claim, release
from dsh_agent._engine.turn_options import TurnOptions
from dsh_agent._live_updates import AgentStatus, InboxTarget, LiveUpdateObserver, Notifier
from dsh_agent._model_settings import ModelSettings
from dsh_agent._run_options import RunPrompt
from dsh_agent.approvals._gate import PendingApproval
from dsh_agent.compaction._engine import CompactionResult
from dsh_agent.errors import AgentClosedError, AgentError
from dsh_agent.inbox import Inbox, check_target
from dsh_agent.retry._chain import retry_target
from dsh_agent.streaming._hub import UpdateHub
from dsh_agent.streaming._stream import DEFAULT_MAX_PENDING, UpdateStream, run_stream
from dsh_agent.tools import Tool
from dsh_llm import CallId, ContentInput
from dsh_llm._ids import MessageId
from dsh_llm._messages import UserMessage
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
        session: Session | None = None,
        store: SessionStore | str | None = None,
        **options: Unpack[LoopOptions[DepsT]],
    ) -> None:
        """Build a loop over ``session`` (new, or loaded from a store, whose pending
        inbox is restored) with the options of an :class:`AgentConfig` (each one is
        described there; ``from_config`` takes a built one). A bad option raises
        before anything is written.

        Name the model once: ``AgentLoop(model="openai:gpt-4.1")`` builds the adapter
        from a model string; ``AgentLoop(adapter=adapter)`` takes ``provider`` and
        ``model`` from the adapter. Given explicitly beside an adapter, ``provider``
        and ``model`` win.

        Without ``session`` the loop creates one (a new id) and owns it: ``aclose()``
        detaches it from ``store``. ``store`` may be a URL (``"sqlite:///agent.db"``):
        the loop opens that store and closes it. To resume a stored session, use
        :meth:`open`, which can await the load."""
        config = loop_config(options, None, "AgentLoop()")
        given, lease = store_of(store)  # a refused attach holds nothing of the store
        if given is not None:
            config = replace(config, store=given)
        owned = session is None
        self._open(Session.create() if session is None else session, config, owned, lease)

    @overload
    @classmethod
    def open(
        cls,
        *,
        store: SessionStore | str,
        session_id: str | None = None,
        **options: Unpack[LoopOptions[DepsT]],
    ) -> LoopOpening[AgentLoop]: ...

    @overload
    @classmethod
    def open(
        cls,
        *,
        config: AgentConfig[Any],
        session_id: str | None = None,
        store: SessionStore | str | None = None,
    ) -> LoopOpening[AgentLoop]: ...

    @classmethod
    def open(
        cls,
        *,
        store: SessionStore | str | None = None,
        session_id: str | None = None,
        config: AgentConfig[Any] | None = None,
        **options: Unpack[LoopOptions[DepsT]],
    ) -> LoopOpening[AgentLoop]:
        """Resume the session ``session_id`` of ``store``, or start it: load it when it
        is stored (repairing a crash, restoring its inbox and waiting approvals),
        create it (stored at once) when not, a new id when ``None``. The keywords are
        the constructor's, or one built ``config`` (whose store is used when
        ``store`` is not given). ``store`` is a store object (the caller's: it stays
        open) or a URL (``"sqlite:///agent.db"``, ``"jsonl:///sessions"``), which the
        loop opens and closes.

        ``async with AgentLoop.open(...) as agent:`` closes the loop, and with it the
        session (flushed, detached from the store), on the way out; ``await
        AgentLoop.open(...)`` returns the open loop for ``aclose()`` later. The store's
        refusals raise as themselves, with nothing held: ``SessionCorruptError`` for a
        damaged log, ``SessionConflictError`` for a session another writer owns (a
        live process, or a loop over this store). A model other than the log's last
        is allowed: the first request logs the new ``request/header``."""
        if config is None:
            config = loop_config(options, None, "AgentLoop.open()")
        elif options:
            raise TypeError("AgentLoop.open() takes config=... or the options, not both")
        elif store is None:
            store = config.store

        built = config

        def build(session: Session, given: SessionStore, lease: StoreLease | None) -> AgentLoop:
            loop = cls.__new__(cls)
            loop._open(session, replace(built, store=given), True, lease)
            return loop

        return LoopOpening(lambda: open_loop(build, store, session_id))

    @classmethod
    def from_config(cls, *, session: Session, config: AgentConfig[Any]) -> AgentLoop:
        """A loop over ``session`` with the options ``config`` holds."""
        loop = cls.__new__(cls)
        loop._open(session, config, False, None)
        return loop

    def _open(
        self,
        session: Session,
        config: AgentConfig[Any],
        owns_session: bool,
        lease: StoreLease | None,
    ) -> None:
        claim(session, self)  # one loop per session object; released by aclose() or GC
        try:
            self._session, self._config = session, config
            self._owns_session, self._lease = owns_session, lease
            self._closed = ClosedFlag()
            self._observers: list[LiveUpdateObserver] = []
            self._updates = UpdateHub()
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
        raise :class:`AgentClosedError`. A session the loop made or loaded itself
        (``open``, or no ``session=``) is then detached from the store, and a store it
        opened from a URL is closed (after the last branch of its ``edit()``). Closing
        again does nothing more. A loop that is garbage-collected gives its session
        back too."""
        self._driver.check_outside_own_turn("aclose()")
        self._closed.closed = True
        try:
            scope = self._driver.scope
            if scope is not None:
                scope.cancel(as_cancel_cause("disposed"))
            await self.when_idle()
            await self._flush()
            store = self._config.store
            if self._owns_session and store is not None:
                store.detach(self._session)  # durable now: the store may load it again
                self._owns_session = False
        finally:
            self._ctx.inbox.close()
            self._updates.close()
            release(self._session, self)
            lease, self._lease = self._lease, None
            if lease is not None:
                await lease.release()

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

    def updates(
        self,
        *,
        until_idle: bool = False,
        max_pending: int = DEFAULT_MAX_PENDING,
        merge_deltas: bool = True,
    ) -> UpdateStream:
        """The typed updates of everything this agent does from this call on, whatever
        starts it (a followup, ``retry()``, ``regenerate()``, ``approve()`` / ``deny()``),
        across turns, until the loop closes (``until_idle``: until the agent is next idle
        after running). Subscribed before returning: call it, then the verb. On a branch
        from :meth:`edit`, the first call also gets the branch's start. Buffering and
        closing are :func:`~dsh_agent.streaming.run_stream`'s."""
        self._check_open()
        return self._updates.updates(
            self, until_idle=until_idle, max_pending=max_pending, merge_deltas=merge_deltas
        )

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
        self,
        settings: ModelSettings | None = None,
        tools: Iterable[Tool] = (),
        *,
        instructions: str | None = None,
    ) -> Iterator[None]:
        """The turns opened within the block belong to one run: every request of each
        of them, until it ends, uses ``settings`` over the loop's, offers ``tools``
        besides its own and adds ``instructions`` to the system prompt, even after
        the block is left (a turn waiting for approval goes on with them). Each turn's
        ``turn/start`` records them, so a loop resuming it in another process applies
        them again (of the extra tools, only a run's ``final_result``); each request's
        ``request/header`` says what it was sent with. The agent must be idle on entry:
        this is how ``run(..., settings=..., instructions=..., output_type=...)``
        gives its options to its own turns. Bad options raise before anything is
        written."""
        self._check_open()
        if self.status != "idle" or self._driver.waiting_turn:
            raise AgentError(
                f"agent {self.id!r} is {self.status if self.status != 'idle' else 'waiting'}"
                ": run options apply to turns opened from an idle agent with no turn "
                "waiting for approval (decide it, or wait for when_idle(), first)"
            )
        requests = self._steps.requests
        options = TurnOptions(
            settings=settings or NO_SETTINGS, instructions=instructions, tools=tuple(tools)
        )
        requests.check(options)
        requests.pending = options
        try:
            yield
        finally:
            requests.pending = None

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
        one, on the same store; it owns its fork, and its first ``updates()`` call
        streams it from its start); this loop and its session are left as they are."""
        self._check_open()
        check_idle(self._session, self._driver.busy, self._pending(), "edit")
        plan = plan_edit(self._session, message_id)
        edited = plan.edited(content)
        config = replace(self._config, pre_step=tuple(self._pre_step_handlers))
        fork = fork_before(self._session, plan.boundary)
        branch = AgentLoop.__new__(AgentLoop)
        branch._open(fork, config, True, None)  # the branch owns the fork it runs
        if self._lease is not None:
            branch._lease = self._lease.share()  # and shares the store this loop opened
        branch._updates.record_start(branch)  # for the branch's first updates() call
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
