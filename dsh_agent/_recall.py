"""``recall``: a tool that gives the model back original messages from its own log.

Compaction replaces the head of the surface with a checkpoint; the log keeps every
message it replaced, and the checkpoint's ``compaction/summary`` names them
(``shadowedMessageIds``, or ``shadowedSeqs`` in a log written without them). ``recall``
returns messages of the calling session's durable log by id, or those a full-text
search of that log finds (``store.search``), so nothing a summary replaced is out of
reach. A checkpoint recalled by id lists the ids it covers, so the model can walk back
through nested summaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dsh_agent._tool_context import ToolContext
from dsh_agent.compaction._engine import CHECKPOINT_PLUGIN, SHADOWED_IDS_FIELD
from dsh_agent.errors import MessageNotFoundError
from dsh_agent.tools import Tool, ToolOutput
from dsh_llm._sources import PluginSource
from dsh_session._search.text import message_text
from dsh_session._session import Session
from dsh_session._surface_view import message_of
from dsh_session.events import CompactionSummaryEvent, LogEvent
from dsh_session.stores import SessionStore

RECALL_DESCRIPTION = (
    "Read original messages of this conversation again, exactly as they were: those a "
    "checkpoint summary replaced, or any earlier one. Give `ids` (message ids, e.g. "
    'those a checkpoint lists) or a full-text `query` (words, "phrases", prefix*, '
    "AND/OR/NOT)."
)

RECALL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ids": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Ids of the messages to return.",
        },
        "query": {"type": "string", "description": "Full-text search of this conversation."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "At most this many messages for a query (default 5).",
        },
    },
    "additionalProperties": False,
}


def recall_tool(store: SessionStore) -> Tool[Any]:
    """The ``recall`` tool over the sessions of ``store``: give it to an agent whose
    session that store persists (``AgentLoop(..., store=store, tools=[recall_tool(store)])``).
    It reads the calling session's durable log; an id the log does not hold fails the
    call with :class:`MessageNotFoundError` naming it (the model sees the text)."""

    async def recall(arguments: dict[str, Any], context: ToolContext[Any]) -> ToolOutput:
        session_id = context.session_id
        if session_id is None:
            raise RuntimeError("recall runs only inside an agent loop (no session id)")
        ids = arguments.get("ids") or []
        query = arguments.get("query")
        if not ids and not query:
            return ToolOutput("Give `ids` or a `query`.", is_error=True)
        session, _ = await store.read(session_id)
        found: list[LogEvent] = [event_of(session, message_id) for message_id in ids]
        if query:
            hits = await store.search(
                query, session_id=session_id, limit=int(arguments.get("limit") or 5)
            )
            found += [session.events[hit.seq] for hit in hits]
        if not found:
            return ToolOutput(f"Nothing in this conversation matches {query!r}.")
        return ToolOutput("\n\n".join(describe(session, event) for event in _unique(found)))

    return Tool(
        name="recall",
        description=RECALL_DESCRIPTION,
        parameters=RECALL_PARAMETERS,
        handler=recall,
        concurrency_safe=True,
    )


def event_of(session: Session, message_id: str) -> LogEvent:
    """The event that holds the message with this id (the first, should an edit have
    logged it again), or :class:`MessageNotFoundError`."""
    for event in session.events:
        message = message_of(event)
        if message is not None and message.id == message_id:
            return event
    raise MessageNotFoundError(session_id=session.id, message_id=message_id)


def covered_ids(session: Session, checkpoint: LogEvent) -> tuple[str, ...] | None:
    """The ids of the messages a compaction checkpoint replaced (its source's
    ``shadowedMessageIds``, or, for a checkpoint the harness wrote, the messages at
    its ``compaction/summary``'s ``shadowedSeqs``); ``None`` for any other event."""
    message = message_of(checkpoint)
    source = None if message is None else message.source
    if not (isinstance(source, PluginSource) and source.plugin == CHECKPOINT_PLUGIN):
        return None
    extra: dict[str, Any] = source.model_extra or {}
    listed = extra.get(SHADOWED_IDS_FIELD)
    if isinstance(listed, Sequence) and not isinstance(listed, str):
        return tuple(str(message_id) for message_id in listed)
    for seq in checkpoint.source_event_seqs or ():
        cited = session.events[seq]
        if isinstance(cited, CompactionSummaryEvent):
            return tuple(_message_ids(session, cited.data.shadowed_seqs))
    return None


def _message_ids(session: Session, seqs: Sequence[int]) -> list[str]:
    messages = (message_of(session.events[seq]) for seq in seqs)
    return [message.id for message in messages if message is not None]


def describe(session: Session, event: LogEvent) -> str:
    """One message as the tool shows it: id, role and seq, then its text."""
    message = message_of(event)
    assert message is not None, "only events holding a message are described"
    lines = [f"[message {message.id} · {message.role} · seq {event.seq}]"]
    covered = covered_ids(session, event)
    if covered is not None:
        lines.append(f"(a checkpoint summary of messages: {', '.join(covered)})")
    lines.append(message_text(message))
    return "\n".join(lines)


def _unique(events: Sequence[LogEvent]) -> list[LogEvent]:
    seen: set[int] = set()
    kept = []
    for event in events:
        if event.seq not in seen:
            seen.add(event.seq)
            kept.append(event)
    return kept


__all__ = [
    "RECALL_DESCRIPTION",
    "RECALL_PARAMETERS",
    "covered_ids",
    "describe",
    "event_of",
    "recall_tool",
]
