"""The pieces of a durable agent's work that bring input into the log: a user message
queued for a turn of its own, and a person's decision on a call waiting for approval.
Each is safe to run again (an activity retried after its flush changes nothing)."""

from __future__ import annotations

from typing import Any

from dsh_agent._config import AgentConfig
from dsh_agent.temporal._payloads import Lane, StepReport
from dsh_agent.temporal._pieces import Piece, held, load_owned, wire
from dsh_llm._create import freeze_message
from dsh_llm._ids import CallId
from dsh_llm._messages import UserMessage
from dsh_session._session import Session
from dsh_session.errors import SessionNotFoundError
from dsh_session.stores import SessionStore


async def deliver(
    store: SessionStore,
    config: AgentConfig[Any],
    session_id: str,
    message_id: str,
    text: str,
    lane: Lane = "next-turn",
) -> StepReport:
    """Queue the user message ``message_id`` (created from ``text``) in ``lane`` of the
    inbox, creating the session on first input. Delivering the same id again (sent
    twice, or an activity retried after its flush) changes nothing."""
    try:
        session = await store.load(session_id, take_over=True, close_open_turn=False)
    except SessionNotFoundError:
        session = Session.create(session_id)
        store.attach(session)
    async with held(store, session):
        piece = Piece(session, wire(session, config, store), session.seq)
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
            inbox.append(lane, message)
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
    session = await load_owned(store, session_id, from_seq)
    async with held(store, session):
        piece = Piece(session, wire(session, config, store), session.seq)
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
]
