"""Events as the records a harness-form JSONL batch is written from, serialized once.

The harness codecs write each record as ``JSON.stringify`` would (``dumps_js``). An
event's own wire JSON (``dump_event``) is already those bytes whenever it holds no
floating-point number: pydantic-core and Python's encoder agree on compact
separators, key order, integers, literal non-ASCII and the escapes of quotes,
backslashes and control characters; only float formatting differs (``1e-05`` against
``1e-5``). So such an event goes to the file as its dumped bytes, where it used to be
dumped, parsed back and dumped again (about three quarters of a 100-event flush).
An event that may hold a float, and a chunk event that may pack into a row with its
neighbours, is still a parsed record, encoded as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from dsh_session.events import SessionEvent
from dsh_session.stores._codec import dump_event

_NUMBER_WITH_FRACTION_OR_EXPONENT = re.compile(rb"[:,\[]-?[0-9]+[.eE]")
"""A JSON number that is a float as pydantic writes it (a value starts after ``:``,
``,`` or ``[`` in compact JSON). Text inside a string may match too; such an event
merely takes the slower, equally exact path."""


def wire_records(events: Iterable[SessionEvent], *, pack_chunks: bool) -> list[Any]:
    """One record per event, in order: its serialized bytes when they are exactly what
    ``dumps_js`` of the parsed event gives, else the parsed event (a dict). With
    ``pack_chunks``, ``assistant/chunk`` events stay dicts so runs of them can pack."""
    records: list[Any] = []
    for event in events:
        raw = dump_event(event)
        if (pack_chunks and event.type == "assistant/chunk") or (
            _NUMBER_WITH_FRACTION_OR_EXPONENT.search(raw) is not None
        ):
            records.append(json.loads(raw))
        else:
            records.append(raw)
    return records
