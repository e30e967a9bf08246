"""Reading a JSONL log: the header line, the event lines, and a torn tail.

A crash in the middle of an append can leave the file ending in part of a batch. The
rules (those of the TypeScript harness, so both read each other's files alike):

* a last line without its newline is torn;
* a complete line that is not JSON, or whose seq is not the next one, starts a torn
  tail (it and everything after it are cut off) -- unless that line or a later
  complete line holds a ``turn/end``: a whole turn written after the damage means the
  damage is in the middle of the log, which is corruption, never silently skipped;
* a line that is well-formed JSON at the right seq but not a valid event is
  corruption (or a format error for an unknown type), wherever it is.

The fast path validates every line in one pass; the line-by-line scan runs only when
that fails, to tell these cases apart.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from dsh_session.errors import SessionCorruptError, SessionError
from dsh_session.events import SessionEvent
from dsh_session.header import SessionHeader, SessionId, parse_header
from dsh_session.parse import parse_events
from dsh_session.stores.recovery import StoredLog, TornTail

# A "type" key whose value is "turn/end". Inside a JSON string every quote is escaped,
# so this cannot match text that merely mentions a turn end.
_TURN_END = re.compile(rb'"type"\s*:\s*"turn/end"')


@dataclass(frozen=True)
class ScannedLog:
    """A JSONL log split into what is kept and where the kept part ends."""

    log: StoredLog
    valid_end: int
    """Byte length of the kept part: the header and the complete, valid events."""


def scan_jsonl(data: bytes, session_id: SessionId, where: str) -> ScannedLog:
    """Parse the bytes of ``<session_id>.jsonl``; ``where`` names the file in errors."""
    lines = data.split(b"\n")
    fragment = lines.pop()  # empty when the file ends with a newline
    if not lines:
        raise SessionCorruptError(f"{where}: the header line is incomplete", field="header")
    header = parse_header(lines[0])
    if header.id != session_id:
        raise SessionCorruptError(
            f"{where}: the header names session {header.id!r}, not {session_id!r}", field="id"
        )
    events = _parse_all(lines[1:])
    if events is None:
        return _scan_line_by_line(data, header, lines, where)
    log_end = len(data) - len(fragment)
    torn = None
    if fragment:
        torn = TornTail(
            line=len(lines) + 1,
            offset=log_end,
            dropped_bytes=len(fragment),
            reason="the last line is incomplete (no newline)",
        )
    return ScannedLog(StoredLog(header, events, torn), log_end)


def _parse_all(rows: list[bytes]) -> list[SessionEvent] | None:
    """Every line as the event at its seq, or ``None`` if any line is off."""
    try:
        events = parse_events(rows)
    except SessionError:
        return None
    if any(event.seq != seq for seq, event in enumerate(events)):
        return None
    return events


class _DamagedLine(Exception):
    """A line that is not a JSON object at the expected seq."""


def _parse_line(row: bytes, seq: int) -> SessionEvent:
    try:
        value = json.loads(row)
    except (ValueError, RecursionError) as error:  # RecursionError: nested too deep
        raise _DamagedLine(f"the line for seq {seq} is not JSON ({error})") from None
    found = value.get("seq") if isinstance(value, dict) else None
    if found != seq or isinstance(found, bool):
        raise _DamagedLine(f"expected the event with seq {seq}, found {found!r}")
    return parse_events([row])[0]


def _scan_line_by_line(
    data: bytes, header: SessionHeader, lines: list[bytes], where: str
) -> ScannedLog:
    """Find the first damaged line and decide: torn tail, or corruption."""
    rows = lines[1:]
    events: list[SessionEvent] = []
    offset = len(lines[0]) + 1
    for seq, row in enumerate(rows):
        try:
            events.append(_parse_line(row, seq))
        except _DamagedLine as damage:
            line = seq + 2
            turn_end_line = next(
                (line + i for i, later in enumerate(rows[seq:]) if _TURN_END.search(later)), None
            )
            if turn_end_line is not None:
                raise SessionCorruptError(
                    f"{where}: line {line} is damaged ({damage}), but line {turn_end_line} "
                    "after it holds a turn/end, so this is not a torn tail",
                    seq=seq,
                ) from None
            torn = TornTail(
                line=line, offset=offset, dropped_bytes=len(data) - offset, reason=str(damage)
            )
            return ScannedLog(StoredLog(header, events, torn), offset)
        offset += len(row) + 1
    raise AssertionError(f"{where}: lines rejected together were accepted one by one")
