"""The harness's event vocabulary (core/session/src/known-event-types.ts), as the rows
of dsh's one event table (``dsh_session._events.table``) that the harness knows.

A reader meeting a type outside this set must refuse the log unless the event carries
``ignorable: true``. Packed chunk-row tags are storage records, not events, and are not
in the set.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dsh_session._events.table import HARNESS_EVENT_TYPES, SURFACE_TYPES
from dsh_session.errors import SessionFormatError

__all__ = ["KNOWN_SESSION_EVENT_TYPES", "SURFACE_EVENT_TYPES", "check_vocabulary"]

KNOWN_SESSION_EVENT_TYPES: frozenset[str] = HARNESS_EVENT_TYPES
"""The harness's 48 types: the rows of dsh's event table marked as harness types."""

SURFACE_EVENT_TYPES: frozenset[str] = SURFACE_TYPES
"""The only types that may carry ``surfaceOp`` and ``sourceEventSeqs``."""


_RETIRED_TYPES = ("request/header-delta", "mode/set")


def check_vocabulary(events: Iterable[Any], session_id: str) -> None:
    """Refuse what the harness refuses to read (session-persistence coordinator.ts
    ``assertSupportedEvents`` and its known-type check): a retired type, a
    ``request/header`` of reason ``fallback``, or an unknown type not marked ignorable.
    Run it on migrated events (legacy ``steering/message`` is converted, not refused)."""
    for event in events:
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "assistant/chunk":  # most of a streamed log: known, never retired
            continue
        seq = event.get("seq") if isinstance(event, dict) else None
        seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
        if kind in _RETIRED_TYPES:
            raise SessionFormatError(
                f"session {session_id!r} holds the retired {kind} event at seq {seq}",
                event_type=str(kind),
                seq=seq,
            )
        data = event.get("data") if isinstance(event, dict) else None
        if kind == "request/header" and isinstance(data, dict) and data.get("reason") == "fallback":
            raise SessionFormatError(
                f"session {session_id!r} holds a request/header of retired reason 'fallback'"
                f" at seq {seq}",
                event_type=kind,
                seq=seq,
            )
        if kind not in KNOWN_SESSION_EVENT_TYPES and event.get("ignorable") is not True:
            raise SessionFormatError(
                f"session {session_id!r} holds event type {kind!r} at seq {seq}, which the"
                " harness does not know and which is not marked ignorable",
                event_type=None if kind is None else str(kind),
                seq=seq,
            )
