"""Harness record lines validated straight into events, where that provably gives what
the full reading path gives.

The full path (:func:`dsh_session._harness_format.read_session`, then ``parse_events``)
decodes every record to a dict, expands packed chunk rows, converts legacy records,
checks the vocabulary and only then validates: four Python passes per record. For a
line that validates *strictly* (nothing coerced: seq and turn numbers are JSON
integers, strings are strings) as an event of a type both dsh and the harness know,
each of those passes is an identity:

* the record scanner keeps it: its seq is an integer at its position (checked here);
* no legacy rule changes or refuses it: the rules match only shapes the current
  models refuse (a ``turn/start`` trigger; a ``turn/end`` with extra keys, a
  non-integer turn, or an ``aborted``/``error`` reason without its cause or error, or
  ``disposed``; messages without ``id``/``role``/``message``), and
  ``steering/message`` is no dsh type;
* the vocabulary check passes: the type is known, hence not retired, and a
  ``request/header`` of reason ``fallback`` does not validate;
* validating the decoded dict gives the same event: both JSON parsers keep the last of
  duplicate keys, and values that need no coercion validate alike from JSON and from
  Python.

Packed chunk rows expand and validate exactly as on the full path. Any other line (an
ignorable unknown type, a legacy record, a seq out of place, damage) sends the whole
artifact down the full path, which also tells a torn tail from corruption.
tests/harness_stores/test_current_records.py pins each claim.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from dsh_session._harness_format import CHUNK_ROW_TYPES, KNOWN_SESSION_EVENT_TYPES, expand_record
from dsh_session._header import SessionHeader
from dsh_session._parse import collector_paused, parse_events, parse_log
from dsh_session._session import Session
from dsh_session.errors import SessionError
from dsh_session.events import EVENT_CLASSES, LogEvent, SessionEventAdapter

CURRENT_TYPES = frozenset(EVENT_CLASSES) & KNOWN_SESSION_EVENT_TYPES
"""Types whose strictly valid records are current events (today every dsh type)."""

_CURRENT_CLASSES = frozenset(
    cls
    for cls in set(EVENT_CLASSES.values())
    if all(t in CURRENT_TYPES for t, c in EVENT_CLASSES.items() if c is cls)
)
"""Event classes every type of which is current: an event of one has a current type."""

_ROW_OPENINGS = tuple(f'{{"type":"{tag}"'.encode() for tag in sorted(CHUNK_ROW_TYPES))
"""How a packed row opens when written by the harness or dsh: such a line is expanded
without first failing validation as an event (a row opening otherwise still expands)."""


def checked_current_events(
    header: SessionHeader | None, lines: list[bytes]
) -> tuple[list[LogEvent] | None, Session | None]:
    """:func:`current_events`, and the session they make under ``header``, checked by
    the log rules as each line is validated (``parse_log``), when no line opens a
    packed row, every line validates strictly, every rule holds and every type is
    current; else what :func:`current_events` finds line by line, with no session."""
    if header is not None:
        # No pass over the lines for packed rows first: a row's tag is no event type,
        # so the first row fails validation and the artifact goes line by line (the
        # rows of a packing writer start at the first chunk run).
        try:
            events, session = parse_log(header, lines, strict=True)
        except SessionError:
            session = None
        if session is not None and _CURRENT_CLASSES.issuperset(map(type, events)):
            return events, session
    return current_events(lines), None


def current_events(lines: list[bytes]) -> list[LogEvent] | None:
    """The events of an artifact's record lines (seq 0 first), or ``None`` unless every
    line is a current event at its seq or a packed chunk row continuing the seqs."""
    validate = SessionEventAdapter.validator.validate_json  # no TypeAdapter wrapper per line
    events: list[LogEvent] = []
    with collector_paused():
        for line in lines:
            if not line.startswith(_ROW_OPENINGS):
                try:
                    event = validate(line, strict=True)
                except ValidationError:
                    pass
                else:
                    if event.seq != len(events) or event.type not in CURRENT_TYPES:
                        return None
                    events.append(event)
                    continue
            members = _row_members(line, len(events))
            if members is None:
                return None
            events.extend(members)
    return events


def _row_members(line: bytes, seq: int) -> list[LogEvent] | None:
    """The chunk events of a packed row whose first member has ``seq``, validated as
    the full path validates them; ``None`` for any other line."""
    try:
        record = json.loads(line)
        members = expand_record(record)
        if members[0] is record:
            return None  # not a packed row
        events = parse_events(members)
    except (ValueError, RecursionError, SessionError):
        return None
    if any(event.seq != seq + k for k, event in enumerate(events)):
        return None
    return events


__all__ = [
    "CURRENT_TYPES",
    "checked_current_events",
    "current_events",
]
