"""Stored rows: events and headers in their wire JSON (reading is
:func:`dsh_session.parse.parse_events`)."""

from __future__ import annotations

from dsh_session.events import SessionEvent
from dsh_session.header import SessionHeader


def dump_event(event: SessionEvent) -> bytes:
    """The event's wire JSON (camelCase, unset optionals omitted)."""
    return event.__pydantic_serializer__.to_json(event)


def dump_header(header: SessionHeader) -> str:
    """The header's wire JSON, untagged."""
    return header.model_dump_json()
