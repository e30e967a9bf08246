"""Stored rows: events and headers in their wire JSON (reading is
:func:`dsh_session._parse.parse_events`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from dsh_session._header import SessionHeader, parse_header
from dsh_session.errors import SessionError
from dsh_session.events import SessionEvent

logger = logging.getLogger("dsh_session.stores")


def dump_event(event: SessionEvent) -> bytes:
    """The event's wire JSON (camelCase, unset optionals omitted)."""
    return event.__pydantic_serializer__.to_json(event)


def dump_header(header: SessionHeader) -> str:
    """The header's wire JSON, untagged."""
    return header.model_dump_json()


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
    "listed_headers",
]
