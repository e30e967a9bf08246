"""Closing the open turn of a stored session as ``aborted``: what a durable agent's
``cancel`` does once the workflow stops scheduling the turn's pieces.

The log ends the turn as the agent loop ends a cancelled one (:mod:`dsh_agent._engine`):
open approval asks are decided ``cancelled``, every call of the open step still
without a result gets a ``tool/call`` and the ``aborted before dispatch`` result (a
call a crash cut off after its ``tool/call`` gets ``TOOL_OUTCOME_UNKNOWN``, as in
:mod:`._steps`), the step ends, and ``turn/end`` says ``aborted`` with the ``user``
cause. Queued input stays in the inbox for later turns. Aborting again, or with no
turn open, changes nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dsh_agent._cancellation import CancelScope
from dsh_agent._config import AgentConfig
from dsh_agent._engine.tool_runner import ToolRunner
from dsh_agent.approvals._open_step import open_step
from dsh_agent.temporal._payloads import StepReport
from dsh_agent.temporal._pieces import Piece, held, load_owned, wire
from dsh_agent.temporal._steps import answer_cut_off, call_seq
from dsh_session.events import AbortedReason, StepData, TurnEndData, UserCause
from dsh_session.stores import SessionStore


async def abort(
    store: SessionStore, config: AgentConfig[Any], session_id: str, from_seq: int
) -> StepReport:
    """End the open turn of ``session_id`` as aborted (see the module docstring)."""
    session = await load_owned(store, session_id, from_seq)
    async with held(store, session):
        piece = Piece(session, wire(session, config, store), session.seq)
        ended = await _abort_open_turn(piece)
        report = piece.report()
        if ended:
            report = replace(report, turn_end="aborted")
    return report


async def _abort_open_turn(piece: Piece) -> bool:
    session, ctx = piece.session, piece.parts.context
    turn = session.open_turn
    if turn is None:
        return False
    scope = CancelScope()
    scope.cancel(UserCause())
    current = open_step(session)
    if current is not None:
        left = ctx.approvals.withdraw(current.calls)
        not_started = []
        for call in left:
            started = call_seq(session, current, call.call_id)
            if started is None:
                not_started.append(call)
            else:
                answer_cut_off(session, current, call.call_id, started)
        runner = ToolRunner(context=ctx, tools=piece.parts.steps.requests.tools)
        await runner.run(scope, current.turn, current.step, not_started)  # none starts
        session.append("step/end", StepData(turn=current.turn, step=current.step))
    reason = AbortedReason(reason=UserCause())
    session.append("turn/end", TurnEndData(turn=turn, reason=reason))
    return True


__all__ = [
    "abort",
]
