"""Events as the records a harness-form JSONL batch is written from, serialized once.

The harness codecs write each record as ``JSON.stringify`` would (``dumps_js``). An
event's own wire JSON (``dump_event``) is already those bytes whenever it holds no
floating-point number: pydantic-core and Python's encoder agree on compact
separators, key order, integers, literal non-ASCII and the escapes of quotes,
backslashes and control characters; only float formatting differs (``1e-05`` against
``1e-5``). So such an event goes to the file as its dumped bytes, where it used to be
dumped, parsed back and dumped again (about three quarters of a 100-event flush's CPU).
An event that may hold a float (a screen of the whole batch, exact when it says no),
and a chunk event that may pack into a row with its neighbours, is still a parsed
record, encoded as before.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dsh_session.events import SessionEvent
from dsh_session.stores._codec import dump_event

_SCREEN = bytes.maketrans(b"123456789.eE", b"000000000...")
"""Digits to ``0`` and what may follow a float's leading digits (``.``, ``e``, ``E``) to
``.``: every float pydantic-core writes then reads ``0.`` where its number starts, a
digit run after ``:``, ``,`` or ``[`` (a value's start in compact JSON) and an optional
minus (``-12.5``, ``1e-07``, ``5e+16``)."""

_DIGIT, _MINUS, _VALUE_STARTS = ord("0"), ord("-"), b":,["


def records_with_floats(raws: list[bytes]) -> set[int]:
    """The positions of the compact JSON texts that may hold a float: exact when a
    position is left out. The texts are screened joined, with one C-speed search for
    the whole batch; a hit inside a string (``3e`` in an id, ``v1.2`` in some text) is
    checked in place and dropped unless it starts a value, where it may make its text
    take the slower, equally exact path."""
    joined = b"\n".join(raws)
    screened = joined.translate(_SCREEN)
    found: set[int] = set()
    hit = screened.find(b"0.")
    while hit != -1:
        start = hit
        while start and screened[start - 1] == _DIGIT:
            start -= 1
        if start and joined[start - 1] == _MINUS:
            start -= 1
        if not (start and joined[start - 1] in _VALUE_STARTS):
            hit = screened.find(b"0.", hit + 2)
            continue
        found.add(joined.count(b"\n", 0, hit))
        next_text = joined.find(b"\n", hit)
        hit = -1 if next_text == -1 else screened.find(b"0.", next_text)
    return found


_DELTAS = frozenset({"text-delta", "reasoning-delta", "tool-call-delta"})
"""Chunks that may pack: strings and integers only, so pydantic's JSON-mode dict of
such an event is exactly the parse of its dumped JSON, at a third of the cost."""


def wire_records(events: Sequence[SessionEvent], *, pack_chunks: bool) -> list[Any]:
    """One record per event, in order: its serialized bytes when they are exactly what
    ``dumps_js`` of the parsed event gives, else the parsed event (a dict). With
    ``pack_chunks``, ``assistant/chunk`` events stay dicts so runs of them can pack."""
    packing = [pack_chunks and event.type == "assistant/chunk" for event in events]
    raws = [b"" if packs else dump_event(e) for e, packs in zip(events, packing, strict=True)]
    floats = records_with_floats(raws)
    if not floats and not pack_chunks:
        return raws  # most batches: every event as dumped
    return [
        _chunk_record(event) if packs else json.loads(raw) if position in floats else raw
        for position, (event, packs, raw) in enumerate(zip(events, packing, raws, strict=True))
    ]


def _chunk_record(event: SessionEvent) -> Any:
    if event.data.chunk.type in _DELTAS:
        return event.__pydantic_serializer__.to_python(event, mode="json")
    return json.loads(dump_event(event))


__all__ = [
    "records_with_floats",
    "wire_records",
]
