"""The parts an agent loop is built from, wired from its configuration.

The loop itself delivers, closes and exposes the verbs; the parts do the work: the
durable inbox, the approval gate, the context hook (compaction), the retry scheduler
(together the :class:`~dsh_agent._engine.context.EngineContext` every runner shares),
the step and turn runners, and the driver that runs turn after turn.

No part holds the loop itself while it is idle (the context reaches it through a weak
reference, and its callbacks close over its lists and flag, not over the loop): an
idle loop that its program drops is freed at once by reference counting, and with it
its session and events, instead of waiting as a reference cycle for the collector.
While a turn runs, the driver holds the loop, so a running loop keeps its claim.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_agent._agent import Agent, PreStepHandler
from dsh_agent._cancellation import CancelScope
from dsh_agent._config import AgentConfig
from dsh_agent._engine.context import Checkpoint, EngineContext
from dsh_agent._engine.driver import TurnDriver
from dsh_agent._engine.run_header import index_tools, loop_header
from dsh_agent._engine.step import StepRunner
from dsh_agent._engine.turn import TurnRunner
from dsh_agent._engine.turn_options import TurnRequests
from dsh_agent._engine.usage_guard import UsageGuard
from dsh_agent._live_updates import LiveUpdate
from dsh_agent.approvals._gate import ApprovalGate
from dsh_agent.compaction._hook import ContextHook
from dsh_agent.errors import AgentError
from dsh_agent.inbox import Inbox
from dsh_agent.retry._scheduler import RetryScheduler
from dsh_session._session import Session

if TYPE_CHECKING:
    from dsh_session.stores import SessionStore


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopParts:
    """What one agent loop drives its session with."""

    context: EngineContext
    steps: StepRunner
    driver: TurnDriver


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopWiring:
    """The loop's own callbacks and lists that its parts call back into; none of
    them holds the loop (see the module docstring)."""

    agent: Callable[[], Agent | None]
    """The loop, through a weak reference."""
    notify: Callable[[LiveUpdate], None]
    pre_step_handlers: Sequence[PreStepHandler]
    closed: Callable[[], bool]


class ClosedFlag:
    """Whether the loop was closed, shared with its driver: calling it answers."""

    __slots__ = ("closed",)

    def __init__(self) -> None:
        self.closed = False

    def __call__(self) -> bool:
        return self.closed


def store_checkpoint(store: SessionStore | None, session: Session) -> Checkpoint:
    """The checkpoint of a loop: make everything appended so far durable when a
    store is attached (a flush cancelled from outside cancels the turn)."""
    if store is None:
        return _no_store

    async def checkpoint(scope: CancelScope) -> None:
        try:
            await store.flush(session)
        except asyncio.CancelledError:
            scope.cancel_from_outside()

    return checkpoint


async def _no_store(scope: CancelScope) -> None:
    """Nothing to make durable without a store."""


def build_parts(
    wiring: LoopWiring,
    session: Session,
    config: AgentConfig[Any],
    *,
    step_runner: type[StepRunner] = StepRunner,
    open_turn_allowed: bool = False,
) -> LoopParts:
    """Check ``config`` against ``session`` and build the parts; a bad option (two
    tools of one name, a bad setting, a turn left open that waits for no approval)
    raises before anything is written. ``step_runner`` and ``open_turn_allowed`` are
    for a driver that goes on with a turn a crash left open one step at a time
    (:mod:`dsh_agent.temporal`)."""
    indexed = index_tools(config.tools)
    gate = ApprovalGate(session, indexed, config.approval)
    if session.open_turn is not None and not gate.pending and not open_turn_allowed:
        raise AgentError(
            f"session {session.id!r} has turn {session.open_turn} open; an agent "
            "loop needs a session with no open turn (loading it from a store closes "
            "it), or one whose turn waits for approval"
        )
    header = loop_header(
        provider=config.provider,
        model=config.model,
        system=config.system,
        tools=config.tools,
        settings=config.model_settings,
    )
    window = ContextHook(
        session=session,
        adapter=config.adapter,
        header=header,
        policy=config.compaction,
        context_window=config.context_window,
    )
    inbox = Inbox(session, wiring.notify)
    checkpoint = store_checkpoint(config.store, session)
    retry = config.retry
    context = EngineContext(
        session=session,
        inbox=inbox,
        checkpoint=checkpoint,
        notify=wiring.notify,
        approvals=gate,
        window=window,
        retries=None
        if retry is None
        else RetryScheduler(session=session, policy=retry, checkpoint=checkpoint),
        deps=config.deps,
        pre_step_handlers=wiring.pre_step_handlers,
        agent=wiring.agent,
        closed=wiring.closed,
        usage=None
        if config.usage_limits is None and config.session_usage_limits is None
        else UsageGuard(session, config.usage_limits, config.session_usage_limits),
        attachments=config.store,
    )
    requests = TurnRequests(
        session=session,
        header=header,
        tools=indexed,
        instructions=config.instructions,
        deps=config.deps,
    )
    steps = step_runner(
        context=context,
        adapter=config.adapter,
        requests=requests,
        check_requests=config.check_requests,
    )
    turns = TurnRunner(context=context, steps=steps)
    driver = TurnDriver(context=context, steps=steps, turns=turns)
    return LoopParts(context=context, steps=steps, driver=driver)


__all__ = [
    "ClosedFlag",
    "LoopParts",
    "LoopWiring",
    "build_parts",
    "store_checkpoint",
]
