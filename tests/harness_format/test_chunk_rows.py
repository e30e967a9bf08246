"""Packed chunk rows: expansion equals the unpacked log, packing equals the harness's rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from dsh_session._harness_format import (
    SQLITE_BOUNDS,
    batch_text,
    decode_frame,
    expand_record,
    pack_chunk_runs,
    scan_frames,
)
from dsh_session.errors import ChunkRowError

from .fixtures import SCENARIOS, artifact, lines


def _delta(seq: int, text: str, *, time: int = 100, index: int = 0) -> dict[str, object]:
    chunk = {"type": "text-delta", "index": index, "text": text}
    return {
        "type": "assistant/chunk",
        "seq": seq,
        "time": time,
        "data": {"turn": 1, "step": 1, "chunk": chunk},
    }


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_packed_rows_expand_to_the_unpacked_log(scenario: str) -> None:
    packed = lines(artifact("jsonl-plain", scenario))[1:]
    unpacked = lines(artifact("jsonl-unpacked", scenario))[1:]
    assert any(r["type"].endswith("-chunks") for r in packed)
    assert [e for record in packed for e in expand_record(record)] == unpacked


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_packing_each_durable_batch_gives_the_harness_bytes(scenario: str) -> None:
    data = artifact("jsonl-zstd", scenario).read_bytes()
    for frame in scan_frames(data).frames[1:]:
        text = decode_frame(data[frame.start : frame.end])
        events = [e for line in text.splitlines() for e in expand_record(json.loads(line))]
        assert batch_text(events) == text


def test_a_tool_call_run_keeps_its_id_and_name() -> None:
    chunks = [
        {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "f", "argumentsDelta": a}
        for a in ('{"a"', ":", "1}")
    ]
    events = [
        {
            "type": "assistant/chunk",
            "seq": 5 + k,
            "time": 9 + k,
            "data": {"turn": 2, "step": 1, "chunk": c},
        }
        for k, c in enumerate(chunks)
    ]
    [row] = pack_chunk_runs(events)
    assert row == {
        "type": "tool-call-chunks",
        "seq0": 5,
        "time0": 9,
        "data": {
            "turn": 2,
            "step": 1,
            "index": 1,
            "dt": [1, 1],
            "id": "c1",
            "name": "f",
            "args": ['{"a"', ":", "1}"],
        },
    }
    assert expand_record(row) == events


def test_runs_shorter_than_three_stay_one_event_per_record() -> None:
    events = [_delta(0, "a"), _delta(1, "b")]
    assert pack_chunk_runs(events) == events


def test_an_event_with_an_extra_field_is_stored_verbatim_and_breaks_the_run() -> None:
    odd = {**_delta(3, "d"), "ignorable": True}
    events = [_delta(0, "a"), _delta(1, "b"), _delta(2, "c"), odd, _delta(4, "e")]
    records = pack_chunk_runs(events)
    assert [r["type"] for r in records] == ["text-chunks", "assistant/chunk", "assistant/chunk"]
    assert records[1] is odd


def test_a_block_change_or_seq_gap_starts_a_new_run() -> None:
    events = [_delta(0, "a"), _delta(1, "b"), _delta(2, "c", index=1), _delta(3, "d", index=1)]
    assert pack_chunk_runs(events) == events


def test_negative_time_gaps_round_trip() -> None:
    events = [_delta(0, "a", time=50), _delta(1, "b", time=40), _delta(2, "c", time=41)]
    [row] = pack_chunk_runs(events)
    assert row["data"]["dt"] == [-10, 1]
    assert expand_record(row) == events


def test_sqlite_rows_hold_at_most_1024_members() -> None:
    events = [_delta(k, "x", time=k) for k in range(1026)]
    records = pack_chunk_runs(events, SQLITE_BOUNDS)
    assert [len(r["data"]["texts"]) if "seq0" in r else 1 for r in records] == [1024, 1, 1]


def test_sqlite_rows_stay_within_one_mebibyte_of_data() -> None:
    events = [_delta(k, "y" * 300_000, time=k) for k in range(8)]
    records = pack_chunk_runs(events, SQLITE_BOUNDS)
    assert [len(r["data"]["texts"]) if "seq0" in r else 1 for r in records] == [3, 3, 1, 1]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda row: row["data"]["dt"].pop(), "data.dt"),
        (lambda row: row.update(seq0=-1), "seq0"),
        (lambda row: row["data"].update(extra=1), "data"),
        (lambda row: row["data"]["texts"].__setitem__(0, 7), "texts"),
    ],
)
def test_a_malformed_row_is_refused_naming_the_field(
    change: Callable[[dict[str, Any]], object], field: str
) -> None:
    [row] = pack_chunk_runs([_delta(4, "a"), _delta(5, "b"), _delta(6, "c")])
    change(row)
    with pytest.raises(ChunkRowError) as caught:
        expand_record(row)
    assert caught.value.field == field


def test_a_sqlite_row_with_fewer_than_three_members_is_refused() -> None:
    row = {
        "type": "text-chunks",
        "seq0": 0,
        "time0": 0,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a"]},
    }
    assert len(expand_record(row)) == 1
    with pytest.raises(ChunkRowError):
        expand_record(row, SQLITE_BOUNDS)
