"""Events as the records a harness-form JSONL batch is written from, serialized once.

The harness codecs write each record as ``JSON.stringify`` would (``dumps_js``). An
event's own wire JSON (``dump_event``) is already those bytes whenever it holds no
floating-point number: pydantic-core and Python's encoder agree on compact
separators, key order, integers, literal non-ASCII and the escapes of quotes,
backslashes and control characters; only float formatting differs (``1e-05`` against
``1e-5``). So such an event goes to the file as its dumped bytes, where it used to be
dumped, parsed back and dumped again (about three quarters of a 100-event flush's CPU).
An event that may hold a float (a cheap screen, exact when it says no), and a chunk
event that may pack into a row with its neighbours, is still a parsed record, encoded
as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from dsh_session.events import SessionEvent
from dsh_session.stores._codec import dump_event

_NUMBER_WITH_FRACTION = re.compile(rb"[:,\[]-?[0-9]+\.")
"""A JSON number with a fractional part (a value starts after ``:``, ``,`` or ``[`` in
compact JSON). Text inside a string may match too; such an event merely takes the
slower, equally exact path."""

_SCREEN = bytes.maketrans(b"123456789,[", b"000000000::")
"""Digits to ``0`` and the separators a value follows (``,`` ``[``) to ``:``."""


def _may_hold_a_float(raw: bytes) -> bool:
    """Whether compact JSON from pydantic-core may hold a float: exact when it says no.
    Every float it writes has a ``.`` right after a digit, or is one digit and an
    exponent (ryu: ``1e16``, ``-5e-7``), which after the screen's mapping always reads
    ``:0e`` or ``:-0e``; the regex runs only on a digit-and-dot hit (a version number
    in some text, say)."""
    screened = raw.translate(_SCREEN)
    if b":0e" in screened or b":-0e" in screened:
        return True
    return b"0." in screened and _NUMBER_WITH_FRACTION.search(raw) is not None


def wire_records(events: Iterable[SessionEvent], *, pack_chunks: bool) -> list[Any]:
    """One record per event, in order: its serialized bytes when they are exactly what
    ``dumps_js`` of the parsed event gives, else the parsed event (a dict). With
    ``pack_chunks``, ``assistant/chunk`` events stay dicts so runs of them can pack."""
    records: list[Any] = []
    for event in events:
        raw = dump_event(event)
        if (pack_chunks and event.type == "assistant/chunk") or _may_hold_a_float(raw):
            records.append(json.loads(raw))
        else:
            records.append(raw)
    return records
