"""A stored session loaded for one piece of work of a durable agent (an activity),
and the engine parts that do it.

Between pieces a turn stays open in the log, so a piece loads the session with
``close_open_turn=False`` and ``take_over=True`` (the previous attempt may be gone or
fenced), builds the engine's parts over it with a step runner whose tool calls run
elsewhere, and flushes and gives the session back however it ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

from dsh_agent._cancellation import CancelScope
from dsh_agent._config import AgentConfig
from dsh_agent._engine.loop_parts import ClosedFlag, LoopParts, LoopWiring, build_parts
from dsh_agent._engine.step import StepRunner
from dsh_agent._live_updates import Notifier
from dsh_agent.approvals._gate import _ApprovalsPending
from dsh_agent.approvals._open_step import OpenStep, open_step
from dsh_agent.errors import AgentError, DurableStepError
from dsh_agent.temporal._payloads import StepReport
from dsh_llm._content import ToolCallBlock
from dsh_session._session import Session
from dsh_session.events import AssistantMessageEvent, StepData, TurnEndReason
from dsh_session.stores import SessionStore


class StepWithToolsElsewhere(StepRunner):
    """The engine's step runner, except that a step's tool calls run elsewhere (one
    activity each): the step stops once its assistant message is committed and its
    approvals asked, with the turn open, as it stops for an approval."""

    async def _run_tools(
        self,
        scope: CancelScope,
        turn: int,
        step: int,
        calls: Sequence[ToolCallBlock],
        *,
        fresh: bool = False,
    ) -> bool:
        if fresh:
            self._ctx.approvals.admit(turn, step, calls, fresh=True)  # asks, all at once
        raise _ApprovalsPending

    async def resume(self, scope: CancelScope, turn: int, step: int) -> TurnEndReason | None:
        """Go on with the open ``step``: ask the model again when its answer was never
        committed; wait while calls have no result; else close it (None: the model needs
        another step). Outside a step, the turn goes on with the next one."""
        current = open_step(self._ctx.session)
        bracket = StepData(turn=turn, step=step)
        if current is None:
            return None
        if not _answered_by_model(self._ctx.session, current):
            return await self._closing(bracket, self._attempts(scope, turn, step, (), None))
        if current.unanswered:
            raise _ApprovalsPending
        await self._closing(bracket, _nothing())
        return None


async def _nothing() -> None:
    """The body of a step whose tool phase is done elsewhere."""


def _answered_by_model(session: Session, current: OpenStep) -> bool:
    events = session.events
    return any(isinstance(event, AssistantMessageEvent) for event in events[current.start :])


@dataclass
class Piece:
    """One loaded session and the engine parts a piece of work uses on it."""

    session: Session
    parts: LoopParts
    first_seq: int

    def report(self) -> StepReport:
        session = self.session
        current = open_step(session)
        turn = session.open_turn
        return StepReport(
            first_seq=self.first_seq,
            end_seq=session.seq,
            turn=session.last_turn if turn is None else turn,
            step=session.open_step,
            calls=tuple(call.call_id for call in current.unanswered) if current else (),
            awaiting_approval=tuple(p.call_id for p in self.parts.context.approvals.pending),
            turn_end=None,
            queued=len(self.parts.context.inbox.next_turn),
        )


def wire(session: Session, config: AgentConfig[Any], store: SessionStore) -> LoopParts:
    if config.pre_step:
        raise AgentError(
            "pre-step handlers need a running agent loop; a durable agent has none "
            "between activities (give the agent no pre_step handlers)"
        )
    wiring = LoopWiring(
        agent=lambda: None,  # no Agent object lives between activities
        notify=Notifier(session.id, []),
        pre_step_handlers=(),
        closed=ClosedFlag(),
    )
    return build_parts(
        wiring,
        session,
        replace(config, store=store),
        step_runner=StepWithToolsElsewhere,
        open_turn_allowed=True,
    )


async def load_owned(store: SessionStore, session_id: str, from_seq: int) -> Session:
    session = await store.load(session_id, take_over=True, close_open_turn=False)
    if session.seq < from_seq:
        store.detach(session)
        raise DurableStepError(
            f"session {session_id!r} in the store ends at seq {session.seq}, before seq "
            f"{from_seq} the workflow already saw: the store is not the one the steps wrote",
            session_id=session_id,
        )
    return session


@asynccontextmanager
async def held(store: SessionStore, session: Session) -> AsyncIterator[None]:
    """Flush ``session`` and give it back to the store however the piece ends."""
    try:
        yield
    finally:
        await store.flush(session)
        store.detach(session)


__all__ = [
    "Piece",
    "StepWithToolsElsewhere",
    "held",
    "load_owned",
    "wire",
]
