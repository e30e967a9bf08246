"""A batch written from events' own JSON is byte-identical to the old encoding
(dump, parse back, ``dumps_js``), floats, escapes and packed chunk runs included."""

from __future__ import annotations

import json

import pytest

from dsh_llm import create_user_message
from dsh_session import Session, SessionEvent
from dsh_session._harness_format import batch_text
from dsh_session.stores._codec import dump_event
from dsh_session.stores._wire_records import records_with_floats, wire_records

FLOATS = [0.1, 1.0, 1.5, 123.456, 1e15, 1e16, 1.5e17, 1e-4, 1e-5, 1.2e-5, 1e-7, -2.5e-9, 1e300]
TEXTS = ["plain", "é ü 中文 🙂", '"quoted" \\ back', "\x00\x01\x1f\x7f \b\f\n\r\t", "\u2028\u2029"]


def _events() -> list[SessionEvent]:
    session = Session.create("wire")
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    for text in TEXTS:
        session.append("user/message", create_user_message(content=text, source={"kind": "user"}))
    for index in range(5):
        chunk = {"type": "text-delta", "index": 0, "text": TEXTS[index % len(TEXTS)]}
        session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk})
    for text in TEXTS:
        chunk = {"type": "reasoning-delta", "index": 1, "text": text}
        session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk})
    for named in (True, True, True, False, False, False, False):
        chunk = {"type": "tool-call-delta", "index": 2, "id": "c1", "argumentsDelta": TEXTS[1]}
        if named:
            chunk["name"] = "tool é"
        session.append("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk})
    config = {"provider": "p", "model": "m", "floats": FLOATS, "big": 2**62, "neg": -3}
    session.append("request/header", {"header": {"config": config}, "reason": "initial"})
    for value in FLOATS:
        source = {"kind": "user", "weight": value}
        session.append("user/message", create_user_message(content="f", source=source))
    return list(session.events)


def _old_text(events: list[SessionEvent], pack_chunks: bool) -> bytes:
    return batch_text([json.loads(dump_event(e)) for e in events], pack_chunks=pack_chunks)


@pytest.mark.parametrize("pack_chunks", [True, False])
def test_the_bytes_are_those_of_the_old_encoding(pack_chunks: bool) -> None:
    events = _events()
    records = wire_records(events, pack_chunks=pack_chunks)
    assert batch_text(records, pack_chunks=pack_chunks) == _old_text(events, pack_chunks)
    assert sum(isinstance(r, bytes) for r in records) >= len(TEXTS)  # the fast path ran


def test_each_float_form_gives_the_old_bytes_alone() -> None:
    for event in _events():
        [record] = wire_records([event], pack_chunks=False)
        assert batch_text([record]) == _old_text([event], False), dump_event(event)


def test_packed_runs_still_pack() -> None:
    text = batch_text(wire_records(_events(), pack_chunks=True))
    assert b'"type":"text-chunks"' in text


def _float_texts() -> list[bytes]:
    """Compact JSON texts holding a float where a value starts, each form of it."""
    texts = []
    for value in [*FLOATS, -0.5, -1e-7, 5e-324, 1.7976931348623157e308]:
        for template in ('{"a":%s}', '{"a":[%s]}', '{"a":[1,%s]}', '{"a":{"b":%s},"c":"x"}'):
            texts.append(json.dumps(json.loads(template % json.dumps(value))).encode())
    return [t.replace(b": ", b":").replace(b", ", b",") for t in texts]


_NO_FLOAT = [
    b'{"id":"01a23e5e-e026-77bf-94ff-517bba04bc8f","n":12,"m":-3}',
    b'{"t":"v1.2 and 3e5 and 1E9 and -2.5 in text"}',
    b'{"a":[1,2,3],"b":"1234567890123456789e0","c":10}',
    b'{"t":"12.","u":"e."}',
]


def test_the_screen_finds_every_float_in_a_batch() -> None:
    floats = _float_texts()
    batch = [t for k, f in enumerate(floats) for t in (_NO_FLOAT[k % len(_NO_FLOAT)], f)]
    found = records_with_floats(batch)
    assert {i for i, t in enumerate(batch) if t in floats} <= found
    assert not found & {i for i, t in enumerate(batch) if t in _NO_FLOAT[:1]}  # ids pass


def test_a_batch_without_floats_is_written_as_dumped() -> None:
    events = [e for e in _events() if b"weight" not in dump_event(e) and e.type != "request/header"]
    assert all(isinstance(r, bytes) for r in wire_records(events, pack_chunks=False))
