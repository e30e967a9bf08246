"""Reading a JSONL log: the header line, the event lines, and a torn tail.

A crash in the middle of an append can leave the file ending in part of a batch. Only
bytes that are genuinely incomplete count as torn (close to the rules of the
TypeScript harness, but stricter: nothing that parses is ever set aside):

* a last line without its newline is torn;
* a complete line that is not JSON starts a torn tail (it and everything after it)
  only when no later line is JSON or holds a ``turn/end``: anything readable after
  the damage means the damage is in the middle of the log, which is corruption;
* a line that is well-formed JSON is never torn: at the wrong seq it is corruption,
  of a shape dsh does not know it is corruption (or a format error for an unknown
  type), wherever it is. Such a file is refused and left exactly as it is.

The fast path validates every line in one pass; the line-by-line scan runs only when
that fails, to tell these cases apart.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from dsh_session._header import SessionHeader, SessionId, parse_header
from dsh_session._parse import parse_events
from dsh_session.errors import SessionCorruptError, SessionError
from dsh_session.events import LogEvent
from dsh_session.stores._recovery import StoredLog, TornTail

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
    if not fragment:
        return ScannedLog(StoredLog(header, events), log_end)
    torn = TornTail(
        line=len(lines) + 1,
        offset=log_end,
        dropped_bytes=len(fragment),
        reason="the last line is incomplete (no newline)",
    )
    return ScannedLog(StoredLog(header, events, torn, fragment), log_end)


def _parse_all(rows: list[bytes]) -> list[LogEvent] | None:
    """Every line as the event at its seq, or ``None`` if any line is off."""
    try:
        events = parse_events(rows)
    except SessionError:
        return None
    if any(event.seq != seq for seq, event in enumerate(events)):
        return None
    return events


def _scan_line_by_line(
    data: bytes, header: SessionHeader, lines: list[bytes], where: str
) -> ScannedLog:
    """Find the first line that is not JSON and decide: torn tail, or corruption. A
    line that is JSON but not the expected event raises where it stands."""
    rows = lines[1:]
    events: list[LogEvent] = []
    offset = len(lines[0]) + 1
    for seq, row in enumerate(rows):
        line = seq + 2
        try:
            value = json.loads(row)
        except RecursionError:
            raise SessionCorruptError(
                f"{where}: line {line} nests too deep to read; a line that is not "
                "incomplete is not a torn tail",
                seq=seq,
            ) from None
        except ValueError as error:
            damage = f"the line for seq {seq} is not JSON ({error})"
            _refuse_if_readable_after(rows[seq + 1 :], line, damage, seq, where)
            torn = TornTail(
                line=line, offset=offset, dropped_bytes=len(data) - offset, reason=damage
            )
            return ScannedLog(StoredLog(header, events, torn, data[offset:]), offset)
        found = value.get("seq") if isinstance(value, dict) else None
        if found != seq or isinstance(found, bool):
            raise SessionCorruptError(
                f"{where}: line {line} is JSON but not the event with seq {seq} "
                f"(found seq {found!r}); a line that parses is not a torn tail",
                seq=seq,
                field="seq",
            )
        events.extend(parse_events([row]))
        offset += len(row) + 1
    raise AssertionError(f"{where}: lines rejected together were accepted one by one")


def _refuse_if_readable_after(
    later: list[bytes], line: int, damage: str, seq: int, where: str
) -> None:
    """Raise :class:`SessionCorruptError` if a line after the damaged one is JSON or
    holds a ``turn/end``: then the damage is not at the end of the log."""
    for number, row in enumerate(later, start=line + 1):
        if _TURN_END.search(row):
            found = "holds a turn/end"
        elif _is_json(row):
            found = "is complete JSON"
        else:
            continue
        raise SessionCorruptError(
            f"{where}: line {line} is damaged ({damage}), but line {number} after it "
            f"{found}, so this is not a torn tail",
            seq=seq,
        )


def _is_json(row: bytes) -> bool:
    try:
        json.loads(row)
    except RecursionError:
        return True  # complete enough to nest past the parser's limit: not torn bytes
    except ValueError:
        return False
    return True


__all__ = [
    "ScannedLog",
    "scan_jsonl",
]
