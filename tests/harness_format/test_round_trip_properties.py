"""Round trips that must hold for any input, not only the fixtures."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dsh_session._harness_format import (
    JSONL_BOUNDS,
    SQLITE_BOUNDS,
    decode_segment,
    decode_source_event_seqs,
    encode_log,
    encode_segment,
    encode_source_event_seqs,
    expand_record,
    pack_chunk_runs,
    read_zstd_log,
)

_MAX_SAFE = 2**53 - 1
_CHUNKS = st.one_of(
    st.builds(
        lambda i, t: {"type": "text-delta", "index": i, "text": t},
        st.integers(0, 1),
        st.text(max_size=3),
    ),
    st.builds(
        lambda i, t: {"type": "reasoning-delta", "index": i, "text": t},
        st.integers(0, 1),
        st.text(max_size=3),
    ),
    st.builds(
        lambda i, c, a: {"type": "tool-call-delta", "index": i, "id": c, "argumentsDelta": a},
        st.integers(0, 1),
        st.sampled_from(["a", "b"]),
        st.text(max_size=3),
    ),
    st.just({"type": "block-start", "index": 0, "blockType": "text"}),
)


@st.composite
def _chunk_events(draw: st.DrawFn) -> list[dict[str, Any]]:
    chunks = draw(st.lists(_CHUNKS, max_size=40))
    time = draw(st.integers(0, 10**12))
    events = []
    for seq, chunk in enumerate(chunks):
        time += draw(st.integers(-5, 5))
        step = draw(st.sampled_from([1, 1, 1, 2]))
        data = {"turn": 1, "step": step, "chunk": chunk}
        events.append({"type": "assistant/chunk", "seq": seq, "time": time, "data": data})
    return events


@given(_chunk_events())
@settings(max_examples=200, deadline=None)
def test_packing_then_expanding_gives_back_the_events(events: list[dict[str, Any]]) -> None:
    for bounds in (JSONL_BOUNDS, SQLITE_BOUNDS):
        records = pack_chunk_runs(events, bounds)
        assert [e for r in records for e in expand_record(r, bounds)] == events


@given(st.lists(st.integers(0, _MAX_SAFE), max_size=20))
def test_source_event_seqs_round_trip(values: list[int]) -> None:
    assert decode_source_event_seqs(encode_source_event_seqs(values)) == values


_ID_CHARS = st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr))


@given(st.text(_ID_CHARS, min_size=1))
def test_any_id_encodes_to_a_safe_segment_and_back(raw: str) -> None:
    # ids as JSON yields them: a surrogate pair is one character, as in JavaScript
    assume(raw.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass") == raw)
    segment = encode_segment(raw)
    assert segment not in (".", "..") and all(c.isascii() and c not in "/\\" for c in segment)
    assert decode_segment(segment) == raw


@given(_chunk_events(), st.integers(1, 7))
@settings(max_examples=50, deadline=None)
def test_a_zstd_log_reads_back_whatever_the_batching(
    events: list[dict[str, Any]], size: int
) -> None:
    batches = [events[i : i + size] for i in range(0, len(events), size)]
    header = {"version": 0, "id": "s", "createdAt": 0}
    log = read_zstd_log(encode_log(header, batches))
    assert log.torn is None and log.events == events
