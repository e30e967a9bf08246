"""Reading a session's events back: ranges checked to hold every seq, for loads,
the search index and followers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dsh_session._header import SessionId
from dsh_session._parse import parse_events
from dsh_session.errors import SessionCorruptError, SessionNotFoundError
from dsh_session.events import LogEvent
from dsh_session.stores.postgres._fencing import Connection


def events_between(
    connection: Connection, session_id: SessionId, start: int, head: int, where: str
) -> list[str]:
    """The wire JSON of events ``start <= seq < head``, checked to be all there."""
    rows = connection.execute(
        "SELECT seq, event FROM dsh_events WHERE session_id = %s AND seq >= %s AND seq < %s "
        "ORDER BY seq",
        (session_id, start, head),
    ).fetchall()
    return _all_there(rows, session_id, start, head, where)


def _all_there(
    rows: Sequence[tuple[Any, ...]], session_id: SessionId, start: int, head: int, where: str
) -> list[str]:
    """The events of ``(seq, event)`` rows, checked to be every seq from ``start`` to
    ``head``."""
    for position, (seq, _) in enumerate(rows, start):
        if seq != position:
            raise SessionCorruptError(
                f"{where}: session {session_id!r} has no event at seq {position} "
                f"(the next stored one is seq {seq})",
                seq=position,
            )
    if start + len(rows) < head:
        raise SessionCorruptError(
            f"{where}: session {session_id!r} records {head} events but stores {start + len(rows)}",
            seq=start + len(rows),
        )
    return [event for _, event in rows]


FROM_SEQ = (
    "SELECT s.head, e.seq, e.event FROM dsh_sessions s LEFT JOIN dsh_events e "
    "ON e.session_id = s.id AND e.seq >= %s AND e.seq < s.head WHERE s.id = %s ORDER BY e.seq"
)
"""A follower's read: the events from a seq on, each row with the session's head, in
one statement (one round trip); parameters ``(from_seq, session_id)``."""


def read_events_from(
    connection: Connection, session_id: SessionId, from_seq: int, where: str
) -> list[LogEvent]:
    """The session's committed events from ``from_seq`` on."""
    rows = connection.execute(FROM_SEQ, (from_seq, session_id)).fetchall()
    return parse_events(texts_from(rows, session_id, from_seq, where))


def texts_from(
    rows: Sequence[tuple[Any, ...]], session_id: SessionId, from_seq: int, where: str
) -> list[str]:
    """The wire JSON of the events in :data:`FROM_SEQ`'s rows, checked to be every one
    from ``from_seq`` to the head."""
    if not rows:
        raise SessionNotFoundError(session_id, where)
    head = int(rows[0][0])
    found = [(seq, event) for _, seq, event in rows if seq is not None]
    return _all_there(found, session_id, from_seq, head, where)


__all__ = [
    "FROM_SEQ",
    "events_between",
    "read_events_from",
    "texts_from",
]
