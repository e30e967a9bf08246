"""Stored rows: events and headers in their wire JSON (validating them is
:func:`dsh_session._parse.parse_events`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from operator import itemgetter

from dsh_session._header import SessionHeader, parse_header
from dsh_session.errors import SessionCorruptError, SessionError
from dsh_session.events import SessionEvent

logger = logging.getLogger("dsh_session.stores")


def dump_event(event: SessionEvent) -> bytes:
    """The event's wire JSON (camelCase, unset optionals omitted)."""
    return event.__pydantic_serializer__.to_json(event)


def dump_header(header: SessionHeader) -> str:
    """The header's wire JSON, untagged."""
    return header.model_dump_json()


def contiguous_events(
    rows: Sequence[tuple[int, str]], start: int, session_id: str, where: str
) -> list[str]:
    """The event JSON of ``(seq, event)`` rows read in seq order, once their seqs are
    checked to run ``start``, ``start + 1``, ... without a gap; a gap raises
    :class:`SessionCorruptError` naming the first missing seq. The check runs in C (a
    Python loop over 100k rows cost 2% of a load); only a failing one is walked to
    find the gap."""
    seqs = list(map(_SEQ, rows))
    if seqs != list(range(start, start + len(seqs))):
        for position, seq in enumerate(seqs, start):
            if seq != position:
                raise SessionCorruptError(
                    f"{where}: session {session_id!r} has no event at seq {position} "
                    f"(the next stored one is seq {seq})",
                    seq=position,
                )
    return list(map(_EVENT, rows))


_SEQ, _EVENT = itemgetter(0), itemgetter(1)


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
    "contiguous_events",
    "dump_event",
    "dump_header",
    "listed_headers",
]
