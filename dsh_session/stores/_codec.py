"""Stored rows: events and headers in their wire JSON (validating them is
:func:`dsh_session._parse.parse_events`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from dsh_session._header import SessionHeader, parse_header
from dsh_session._parse import RawEvent
from dsh_session.errors import SessionCorruptError, SessionError
from dsh_session.events import SessionEvent

logger = logging.getLogger("dsh_session.stores")


def dump_event(event: SessionEvent) -> bytes:
    """The event's wire JSON (camelCase, unset optionals omitted)."""
    return event.__pydantic_serializer__.to_json(event)


def dump_header(header: SessionHeader) -> str:
    """The header's wire JSON, untagged."""
    return header.model_dump_json()


def events_in_seq_order(
    rows: Iterable[tuple[int, RawEvent]], start: int, session_id: str, where: str
) -> Iterator[RawEvent]:
    """The event JSON of ``(seq, event)`` rows read in seq order, each yielded once its
    seq is checked to continue ``start``, ``start + 1``, ... without a gap; a gap raises
    :class:`SessionCorruptError` naming the first missing seq. Lazy, so a reader
    streaming rows from a cursor holds one row at a time (the rows of a 100k-event log
    held at once were as large as the events built from them)."""
    expected = start
    for seq, event in rows:
        if seq != expected:
            raise SessionCorruptError(
                f"{where}: session {session_id!r} has no event at seq {expected} "
                f"(the next stored one is seq {seq})",
                seq=expected,
            )
        expected += 1
        yield event


def listed_headers(where: str, rows: Iterable[tuple[str, str]]) -> list[SessionHeader]:
    """The headers of ``(id, header JSON)`` rows that parse and name their own row's id;
    the others are left out of a listing with a warning (loading them says why)."""
    headers = []
    for session_id, stored in rows:
        try:
            header = parse_header(stored)
        except SessionError as error:
            logger.warning("%s: session %r not listed: %s", where, session_id, error)
            continue
        if header.id != session_id:
            logger.warning(
                "%s: session %r not listed: its header names %r", where, session_id, header.id
            )
            continue
        headers.append(header)
    return headers


__all__ = [
    "dump_event",
    "dump_header",
    "events_in_seq_order",
    "listed_headers",
]
