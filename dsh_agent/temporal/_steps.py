"""Exactly one step of a stored session: what one durable-execution activity does.

The agent loop (:mod:`dsh_agent._engine`) runs a whole turn in one process. An
activity does one piece of it against the store and returns: here the model step (open
or continue a turn, ask the model, commit its answer) and one tool call
(:mod:`._inputs` brings input in). Each loads the session (:mod:`._pieces`), does its
piece with the engine's own turn, step and tool runners, flushes and gives the session
back, so any worker can do the next piece.

Between pieces the turn stays open in the log: the step stops after its assistant
message is committed (and its approvals asked), as it stops for an approval. The store
is therefore loaded with ``close_open_turn=False`` and this module, not load-time
repair, decides what a piece left unfinished by a crash means:

- a model step whose assistant message is not in the log is asked again (one more
  attempt of the same step; a retry budget already spent is read from the log);
- a tool call whose result is in the log never runs again;
- a call that was started (``tool/call`` logged) and has no result gets the
  ``TOOL_OUTCOME_UNKNOWN`` result load-time repair would write, unless its tool was
  declared idempotent: then it runs again with the same ``ToolContext`` (so the same
  ``idempotency_key``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import Any

from dsh_agent._cancellation import CancelScope
from dsh_agent._config import AgentConfig
from dsh_agent._engine.context import FRESH, Resume, TurnKind
from dsh_agent._engine.tool_runner import ToolRunner
from dsh_agent._engine.turn import TurnRunner
from dsh_agent._live_updates import Notifier
from dsh_agent._tool_context import ToolContext
from dsh_agent.approvals._open_step import OpenStep, open_step
from dsh_agent.errors import DurableStepError
from dsh_agent.inbox import Inbox
from dsh_agent.temporal._payloads import StepReport
from dsh_agent.temporal._pieces import Piece, held, load_owned, wire
from dsh_agent.tools import execute_tool_call
from dsh_llm._content import TextBlock
from dsh_llm._create import create_tool_result_message
from dsh_llm._ids import CallId
from dsh_llm._messages import UserMessage
from dsh_session._repair import OUTCOME_UNKNOWN, OUTCOME_UNKNOWN_TEXT
from dsh_session._session import Session
from dsh_session.events import (
    StepStartEvent,
    ToolCallEvent,
    ToolResultData,
    ToolResultEvent,
    TurnEndReason,
    TurnStartEvent,
)
from dsh_session.stores import SessionStore


async def model_step(
    store: SessionStore,
    config: AgentConfig[Any],
    session_id: str,
    from_seq: int,
    message_ids: Collection[str] = (),
) -> StepReport:
    """Open a turn for the oldest pending input, or go on with the open one, up to the
    end of the turn or the tool calls of a model answer (which run elsewhere).
    ``message_ids`` must be in the log already (queued or entered)."""
    session = await load_owned(store, session_id, from_seq)
    async with held(store, session):
        piece = Piece(session, wire(session, config, store), session.seq)
        _check_known(piece, message_ids)
        reason = await _drive_turn(piece)
        report = piece.report()
        if reason is not None:
            report = replace(report, turn_end=reason.kind)
    return report


def _check_known(piece: Piece, message_ids: Collection[str]) -> None:
    inbox, session = piece.parts.context.inbox, piece.session
    pending = {message.id for message in (*inbox.next_turn, *inbox.next_step)}
    for message_id in message_ids:
        if message_id not in pending and session.surface_seq_of(message_id) is None:
            raise DurableStepError(
                f"message {message_id!r} is neither queued nor entered in session "
                f"{session.id!r}: deliver it before the step that takes it",
                session_id=session.id,
            )


async def _drive_turn(piece: Piece) -> TurnEndReason | None:
    ctx, session = piece.parts.context, piece.session
    turns = TurnRunner(context=ctx, steps=piece.parts.steps)
    scope = CancelScope()
    turn = session.open_turn
    claimed: tuple[UserMessage, ...] = ()
    kind: TurnKind
    if turn is None:
        if not ctx.inbox.next_turn and not ctx.inbox.next_step:
            return None
        turn, claimed = turns.open(FRESH)
        if ctx.retries is not None:
            ctx.retries.carry(turn, None)
        kind = FRESH
    else:
        last_step = session.open_step or _last_step(session, turn)
        if last_step == 0:  # claimed, then cut off before the first step started
            claimed, kind = _claimed_by_open_turn(session), FRESH
        else:
            kind = Resume(last_step)
    return await turns.run(scope, turn, claimed, kind)


def _last_step(session: Session, turn: int) -> int:
    for event in reversed(session.events):
        if isinstance(event, StepStartEvent) and event.data.turn == turn:
            return event.data.step
        if isinstance(event, TurnStartEvent):
            return 0
    return 0


def _claimed_by_open_turn(session: Session) -> tuple[UserMessage, ...]:
    """What the open turn claimed for its first step: the inbox as it was before its
    ``turn/start``, claimed the way :meth:`Inbox.claim_first_step` claims."""
    events = session.events
    start = next(i for i in range(len(events) - 1, -1, -1) if isinstance(events[i], TurnStartEvent))
    before = Session.from_log(session.header, events[:start])
    inbox = Inbox(before, Notifier(session.id, []))
    return (*inbox.next_step, *inbox.next_turn[:1])


async def tool_call(
    store: SessionStore,
    config: AgentConfig[Any],
    session_id: str,
    from_seq: int,
    call_id: CallId,
    idempotent_tools: Collection[str],
) -> StepReport:
    """Run the open step's call ``call_id`` and commit its result, unless the log has
    it already (see the module docstring for a call a crash cut off)."""
    session = await load_owned(store, session_id, from_seq)
    async with held(store, session):
        piece = Piece(session, wire(session, config, store), session.seq)
        await _answer_call(piece, call_id, idempotent_tools)
        report = piece.report()
    return report


async def _answer_call(piece: Piece, call_id: CallId, idempotent_tools: Collection[str]) -> None:
    session, ctx = piece.session, piece.parts.context
    current = open_step(session)
    call = next((c for c in current.calls if c.call_id == call_id), None) if current else None
    if current is None or call is None:
        if _has_result(session, call_id):
            return  # answered, and its step already closed by a later piece
        raise DurableStepError(
            f"call {call_id!r} is not a call of the open step of session {session.id!r}",
            session_id=session.id,
        )
    if call_id in current.answered:
        return
    if any(p.call_id == call_id for p in ctx.approvals.pending):
        raise DurableStepError(
            f"call {call_id!r} of session {session.id!r} waits for a person's decision",
            session_id=session.id,
        )
    tools = piece.parts.steps.requests.tools
    started = call_seq(session, current, call_id)
    if started is None:
        runner = ToolRunner(context=ctx, tools=tools)
        await runner.run(CancelScope(), current.turn, current.step, (call,))
        return
    if call.name not in idempotent_tools:
        answer_cut_off(session, current, call_id, started)
        return
    context = ToolContext(
        call_id=call_id,
        turn=current.turn,
        step=current.step,
        cancelled=CancelScope().cancelled,
        deps=ctx.deps,
    )
    outcome = await execute_tool_call(tools, call, context)
    for extra in outcome.additional_contexts:
        ctx.inbox.append("next-step", extra)
    message = create_tool_result_message(
        call_id=call_id, content=outcome.content, is_error=outcome.is_error
    )
    data = ToolResultData(
        turn=current.turn,
        step=current.step,
        message=message,
        error=outcome.error,
        meta=outcome.meta,
    )
    session.append("tool/result", data, source_event_seqs=(started,))


def answer_cut_off(session: Session, current: OpenStep, call_id: CallId, started: int) -> None:
    """Commit the ``TOOL_OUTCOME_UNKNOWN`` result load-time repair writes for a call
    that was started (its ``tool/call`` at seq ``started``) and never answered."""
    message = create_tool_result_message(
        call_id=call_id, content=(TextBlock(text=OUTCOME_UNKNOWN_TEXT),), is_error=True
    )
    data = ToolResultData(
        turn=current.turn, step=current.step, message=message, error=OUTCOME_UNKNOWN, meta=None
    )
    session.append("tool/result", data, source_event_seqs=(started,))


def call_seq(session: Session, current: OpenStep, call_id: CallId) -> int | None:
    for event in session.events[current.start :]:
        if isinstance(event, ToolCallEvent) and event.data.call_id == call_id:
            return event.seq
    return None


def _has_result(session: Session, call_id: CallId) -> bool:
    return any(
        isinstance(event, ToolResultEvent) and event.data.message.source.call_id == call_id
        for event in reversed(session.events)
    )


__all__ = [
    "answer_cut_off",
    "call_seq",
    "model_step",
    "tool_call",
]
