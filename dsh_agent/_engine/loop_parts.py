"""The parts an agent loop is built from, wired from its constructor's options.

The loop itself delivers, closes and exposes the verbs; the parts do the work: the
durable inbox, the approval gate, the context hook (compaction), the retry scheduler,
the step and turn runners, and the driver that runs turn after turn.

No part holds the loop itself while it is idle (the wiring reaches it through a weak
reference, and its callbacks close over its lists and flag, not over the loop): an
idle loop that its program drops is freed at once by reference counting, and with it
its session and events, instead of waiting as a reference cycle for the collector.
While a turn runs, the driver holds the loop, so a running loop keeps its claim.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dsh_agent._agent import Agent
from dsh_agent._cancellation import CancelScope
from dsh_agent._engine.driver import TurnDriver
from dsh_agent._engine.run_header import index_tools, loop_header
from dsh_agent._engine.step import Checkpoint, StepRunner
from dsh_agent._engine.turn import TurnRunner
from dsh_agent._model_settings import ModelSettings
from dsh_agent._notifications import Notification
from dsh_agent._prestep import PreStepHandler
from dsh_agent.approvals._gate import ApprovalGate
from dsh_agent.approvals._policy import ApprovalPolicy
from dsh_agent.compaction._config import Compaction
from dsh_agent.compaction._hook import ContextHook
from dsh_agent.errors import AgentError
from dsh_agent.inbox import Inbox
from dsh_agent.retry._policy import RetryPolicy
from dsh_agent.retry._scheduler import RetryScheduler
from dsh_agent.tools import Tool
from dsh_llm._request import ModelAdapter
from dsh_session._session import Session

if TYPE_CHECKING:
    from dsh_session.stores import SessionStore


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopParts:
    """What one agent loop drives its session with."""

    inbox: Inbox
    approvals: ApprovalGate
    context: ContextHook
    retries: RetryScheduler | None
    steps: StepRunner
    driver: TurnDriver


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopWiring:
    """The loop's own callbacks and lists that its parts call back into; none of
    them holds the loop (see the module docstring)."""

    agent: Callable[[], Agent | None]
    """The loop, through a weak reference."""
    notify: Callable[[Notification], None]
    checkpoint: Checkpoint
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
    *,
    session: Session,
    adapter: ModelAdapter,
    provider: str,
    model: str,
    system: str | None,
    tools: Sequence[Tool],
    settings: ModelSettings,
    check_requests: bool,
    retry: RetryPolicy | None,
    context_window: int | None,
    compaction: Compaction | None,
    approval: ApprovalPolicy | None,
    deps: object,
) -> LoopParts:
    """Check the options against ``session`` and build the parts; a bad option (two
    tools of one name, a bad setting, a turn left open that waits for no approval)
    raises before anything is written."""
    indexed = index_tools(tools)
    gate = ApprovalGate(session, indexed, approval)
    if session.open_turn is not None and not gate.pending:
        raise AgentError(
            f"session {session.id!r} has turn {session.open_turn} open; an agent "
            "loop needs a session with no open turn (loading it from a store closes "
            "it), or one whose turn waits for approval"
        )
    header = loop_header(
        provider=provider, model=model, system=system, tools=tools, settings=settings
    )
    context = ContextHook(
        session=session,
        adapter=adapter,
        header=header,
        policy=compaction,
        context_window=context_window,
    )
    inbox = Inbox(session, wiring.notify)
    retries = (
        None
        if retry is None
        else RetryScheduler(session=session, policy=retry, checkpoint=wiring.checkpoint)
    )
    steps = StepRunner(
        session=session,
        adapter=adapter,
        tools=indexed,
        header=header,
        inbox=inbox,
        checkpoint=wiring.checkpoint,
        check_requests=check_requests,
        notify=wiring.notify,
        retry=retries,
        context=context,
        approvals=gate,
        deps=deps,
    )
    turns = TurnRunner(
        agent=wiring.agent,
        session=session,
        inbox=inbox,
        steps=steps,
        pre_step_handlers=wiring.pre_step_handlers,
        checkpoint=wiring.checkpoint,
        notify=wiring.notify,
        context=context,
    )
    driver = TurnDriver(
        session=session,
        inbox=inbox,
        steps=steps,
        turns=turns,
        retries=retries,
        approvals=gate,
        notify=wiring.notify,
        closed=wiring.closed,
        owner=wiring.agent,
    )
    return LoopParts(
        inbox=inbox, approvals=gate, context=context, retries=retries, steps=steps, driver=driver
    )
