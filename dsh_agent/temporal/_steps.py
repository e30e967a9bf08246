"""Exactly one step of a stored session: what one durable-execution activity does.

The agent loop (:mod:`dsh_agent._engine`) runs a whole turn in one process. An
activity does one piece of it against the store and returns: the model step (open or
continue a turn, ask the model, commit its answer), one tool call, the delivery of one
input, one approval decision. Each loads the session (taking ownership, fencing a
writer that is gone), does its piece with the engine's own turn, step and tool runners,
flushes and gives the session back, so any worker can do the next piece.

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

from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

from dsh_agent._cancellation import CancelScope
from dsh_agent._config import AgentConfig
from dsh_agent._engine.context import FRESH, Resume, TurnKind
from dsh_agent._engine.loop_parts import ClosedFlag, LoopParts, LoopWiring, build_parts
from dsh_agent._engine.step import StepRunner
from dsh_agent._engine.tool_runner import ToolRunner
from dsh_agent._engine.turn import TurnRunner
from dsh_agent._live_updates import Notifier
from dsh_agent._tool_context import ToolContext
from dsh_agent.approvals._gate import _ApprovalsPending
from dsh_agent.approvals._open_step import OpenStep, open_step
from dsh_agent.errors import AgentError, DurableStepError
from dsh_agent.inbox import Inbox
from dsh_agent.temporal._payloads import StepReport
from dsh_agent.tools import execute_tool_call
from dsh_llm._content import TextBlock, ToolCallBlock
from dsh_llm._create import create_tool_result_message, freeze_message
from dsh_llm._ids import CallId
from dsh_llm._messages import UserMessage
from dsh_session._repair import OUTCOME_UNKNOWN, OUTCOME_UNKNOWN_TEXT
from dsh_session._session import Session
from dsh_session.errors import SessionNotFoundError
from dsh_session.events import (
    AssistantMessageEvent,
    StepData,
    StepStartEvent,
    ToolCallEvent,
    ToolResultData,
    ToolResultEvent,
    TurnEndReason,
    TurnStartEvent,
)
from dsh_session.stores import SessionStore


class _StepWithToolsElsewhere(StepRunner):
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
class _Piece:
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


def _wire(session: Session, config: AgentConfig[Any], store: SessionStore) -> LoopParts:
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
        step_runner=_StepWithToolsElsewhere,
        open_turn_allowed=True,
    )


async def _load(store: SessionStore, session_id: str, from_seq: int) -> Session:
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
async def _held(store: SessionStore, session: Session) -> AsyncIterator[None]:
    """Flush ``session`` and give it back to the store however the piece ends."""
    try:
        yield
    finally:
        await store.flush(session)
        store.detach(session)


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
    session = await _load(store, session_id, from_seq)
    async with _held(store, session):
        piece = _Piece(session, _wire(session, config, store), session.seq)
        _check_known(piece, message_ids)
        reason = await _drive_turn(piece)
        report = piece.report()
        if reason is not None:
            report = replace(report, turn_end=reason.kind)
    return report


def _check_known(piece: _Piece, message_ids: Collection[str]) -> None:
    inbox, session = piece.parts.context.inbox, piece.session
    pending = {message.id for message in (*inbox.next_turn, *inbox.next_step)}
    for message_id in message_ids:
        if message_id not in pending and session.surface_seq_of(message_id) is None:
            raise DurableStepError(
                f"message {message_id!r} is neither queued nor entered in session "
                f"{session.id!r}: deliver it before the step that takes it",
                session_id=session.id,
            )


async def _drive_turn(piece: _Piece) -> TurnEndReason | None:
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
    session = await _load(store, session_id, from_seq)
    async with _held(store, session):
        piece = _Piece(session, _wire(session, config, store), session.seq)
        await _answer_call(piece, call_id, idempotent_tools)
        report = piece.report()
    return report


async def _answer_call(piece: _Piece, call_id: CallId, idempotent_tools: Collection[str]) -> None:
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
    tools = piece.parts.steps.tools
    started = _call_seq(session, current, call_id)
    if started is None:
        runner = ToolRunner(context=ctx, tools=tools)
        await runner.run(CancelScope(), current.turn, current.step, (call,))
        return
    if call.name in idempotent_tools:
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
        content, is_error, error, meta = (
            outcome.content,
            outcome.is_error,
            outcome.error,
            outcome.meta,
        )
    else:
        content, is_error = (TextBlock(text=OUTCOME_UNKNOWN_TEXT),), True
        error, meta = OUTCOME_UNKNOWN, None
    message = create_tool_result_message(call_id=call_id, content=content, is_error=is_error)
    data = ToolResultData(
        turn=current.turn, step=current.step, message=message, error=error, meta=meta
    )
    session.append("tool/result", data, source_event_seqs=(started,))


def _call_seq(session: Session, current: OpenStep, call_id: CallId) -> int | None:
    for event in session.events[current.start :]:
        if isinstance(event, ToolCallEvent) and event.data.call_id == call_id:
            return event.seq
    return None


def _has_result(session: Session, call_id: CallId) -> bool:
    return any(
        isinstance(event, ToolResultEvent) and event.data.message.source.call_id == call_id
        for event in reversed(session.events)
    )


async def deliver(
    store: SessionStore, config: AgentConfig[Any], session_id: str, message_id: str, text: str
) -> StepReport:
    """Queue the user message ``message_id`` (created from ``text``, for a turn of its
    own), creating the session on first input. Delivering the same id again (an
    activity retried after its flush) changes nothing."""
    try:
        session = await store.load(session_id, take_over=True, close_open_turn=False)
    except SessionNotFoundError:
        session = Session.create(session_id)
        store.attach(session)
    async with _held(store, session):
        piece = _Piece(session, _wire(session, config, store), session.seq)
        inbox = piece.parts.context.inbox
        pending = (*inbox.next_turn, *inbox.next_step)
        known = session.surface_seq_of(message_id) is not None
        if not known and all(message.id != message_id for message in pending):
            message = freeze_message(
                {
                    "id": message_id,
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "source": {"kind": "user"},
                }
            )
            assert isinstance(message, UserMessage)
            inbox.append("next-turn", message)
        report = piece.report()
    return report


async def decide(
    store: SessionStore,
    config: AgentConfig[Any],
    session_id: str,
    from_seq: int,
    call_id: CallId,
    approved: bool,
    reason: str | None,
) -> StepReport:
    """Record a person's decision on the waiting call ``call_id`` (a denial commits
    its error result at once); a call already decided changes nothing."""
    session = await _load(store, session_id, from_seq)
    async with _held(store, session):
        piece = _Piece(session, _wire(session, config, store), session.seq)
        gate = piece.parts.context.approvals
        if any(p.call_id == call_id for p in gate.pending):
            if approved:
                gate.approve(call_id)
            else:
                gate.deny(call_id, reason)
        report = piece.report()
    return report


__all__ = [
    "decide",
    "deliver",
    "model_step",
    "tool_call",
]
