"""JSONL damage: a torn tail is cut off and reported; damage in the middle is corruption."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

import pytest

from dsh_session._session import Session
from dsh_session.errors import SessionCorruptError
from dsh_session.stores import JsonlSessionStore

from .flat_logs import flat_log
from .scenarios import complete_turn


async def _two_turn_file(directory: Path) -> tuple[Session, bytes, int]:
    """A flat log of two turns (as dsh wrote them before the harness layout): the
    session, the file bytes and where the second turn's lines start."""
    session = Session.create("torn")
    complete_turn(session)
    first_batch_end = len(flat_log(session))
    complete_turn(session, tool_output="x" * 300)
    return session, flat_log(session), first_batch_end


def _line_ends(data: bytes) -> list[int]:
    return [index + 1 for index, byte in enumerate(data) if byte == ord("\n")]


async def test_a_file_cut_anywhere_in_the_last_batch_loads_its_complete_lines(
    tmp_path: Path,
) -> None:
    session, data, batch_start = await _two_turn_file(tmp_path / "original")
    line_ends = _line_ends(data)
    near_boundaries = {end + delta for end in line_ends for delta in (-1, 0, 1)}
    cuts = sorted(
        cut
        for cut in near_boundaries | set(random.Random(7).sample(range(len(data)), 40))
        if batch_start <= cut < len(data)
    )
    for cut in cuts:
        directory = tmp_path / f"cut-{cut}"
        directory.mkdir()
        (directory / "torn.jsonl").write_bytes(data[:cut])
        complete_lines = sum(1 for end in line_ends if end <= cut) - 1  # minus the header

        store = JsonlSessionStore(directory)
        loaded = await store.load("torn")

        assert list(loaded.events[:complete_lines]) == list(session.events[:complete_lines])
        assert loaded.open_turn is None
        torn = store.load_report(loaded).torn_tail
        if cut in line_ends:
            assert torn is None
        else:
            assert torn is not None
            assert (torn.offset, torn.dropped_bytes) == (
                max(e for e in line_ends if e <= cut),
                cut - torn.offset,
            )
        await store.close()
        again = JsonlSessionStore(directory)
        reloaded = await again.load("torn")
        assert again.load_report(reloaded).torn_tail is None
        assert list(reloaded.events) == list(loaded.events)


async def test_a_torn_tail_is_logged_and_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    session, data, _ = await _two_turn_file(tmp_path)
    path = tmp_path / "torn.jsonl"
    path.write_bytes(data + b'{"type":"turn/st')
    store = JsonlSessionStore(tmp_path)

    with caplog.at_level(logging.WARNING, logger="dsh_session.stores"):
        loaded = await store.load("torn")

    torn = store.load_report(loaded).torn_tail
    assert torn is not None
    assert (torn.line, torn.offset, torn.dropped_bytes) == (session.seq + 2, len(data), 16)
    assert "incomplete" in torn.reason
    assert "torn tail of 16 byte(s)" in caplog.text
    repaired = path.read_bytes()
    assert repaired.startswith(data)
    assert [json.loads(line)["type"] for line in _lines(repaired[len(data) :])] == [
        "session/end-seed"
    ]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")[:-1]


def _join(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


async def test_an_unparsable_last_line_is_a_torn_tail(tmp_path: Path) -> None:
    session, data, _ = await _two_turn_file(tmp_path)
    lines = _lines(data)
    lines[-1] = b'{"type": "turn/e\x00nd", garbage'
    (tmp_path / "torn.jsonl").write_bytes(_join(lines))
    store = JsonlSessionStore(tmp_path)

    loaded = await store.load("torn")

    torn = store.load_report(loaded).torn_tail
    assert torn is not None
    assert torn.line == len(lines)
    assert "not JSON" in torn.reason
    assert list(loaded.events[: session.seq - 1]) == list(session.events[:-1])
    assert [event.type for event in loaded.events[session.seq - 1 :]] == [
        "turn/end",
        "session/end-seed",
    ]


async def test_a_damaged_line_followed_by_a_turn_end_is_corruption(tmp_path: Path) -> None:
    _, data, _ = await _two_turn_file(tmp_path)
    lines = _lines(data)
    lines[5] = lines[5][:20]
    (tmp_path / "torn.jsonl").write_bytes(_join(lines))

    with pytest.raises(SessionCorruptError, match="line 6 is damaged") as raised:
        await JsonlSessionStore(tmp_path).load("torn")
    assert raised.value.seq == 4


async def test_a_seq_gap_at_the_end_is_corruption_and_the_file_is_left_alone(
    tmp_path: Path,
) -> None:
    session, data, _ = await _two_turn_file(tmp_path)
    lines = _lines(data)
    del lines[-3]  # the final assistant/message; step/end and turn/end follow with a gap
    lines = lines[:-1]  # ...and drop the turn/end so no turn/end follows the gap
    path = tmp_path / "torn.jsonl"
    path.write_bytes(_join(lines))

    with pytest.raises(SessionCorruptError, match="is JSON but not the event with seq") as raised:
        await JsonlSessionStore(tmp_path).load("torn")

    assert raised.value.seq == session.seq - 3
    assert path.read_bytes() == _join(lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["torn.jsonl"]


async def test_a_seq_gap_followed_by_a_turn_end_is_corruption(tmp_path: Path) -> None:
    _, data, _ = await _two_turn_file(tmp_path)
    lines = _lines(data)
    del lines[4]

    (tmp_path / "torn.jsonl").write_bytes(_join(lines))

    with pytest.raises(SessionCorruptError, match="not a torn tail") as raised:
        await JsonlSessionStore(tmp_path).load("torn")
    assert raised.value.seq == 3


async def test_a_well_formed_but_invalid_event_is_corruption_even_at_the_end(
    tmp_path: Path,
) -> None:
    _, data, _ = await _two_turn_file(tmp_path)
    lines = _lines(data)
    last = json.loads(lines[-1])
    last["data"]["turn"] = "one"
    lines[-1] = json.dumps(last).encode()
    (tmp_path / "torn.jsonl").write_bytes(_join(lines))

    with pytest.raises(SessionCorruptError) as raised:
        await JsonlSessionStore(tmp_path).load("torn")
    assert raised.value.seq == len(lines) - 2


async def test_a_log_whose_rules_break_midway_is_corruption(tmp_path: Path) -> None:
    _, data, _ = await _two_turn_file(tmp_path)
    lines = _lines(data)
    step_start = json.loads(lines[2])
    assert step_start["type"] == "step/start"
    step_start["data"]["step"] = 2
    lines[2] = json.dumps(step_start).encode()
    (tmp_path / "torn.jsonl").write_bytes(_join(lines))

    with pytest.raises(SessionCorruptError) as raised:
        await JsonlSessionStore(tmp_path).load("torn")
    assert raised.value.seq == 1


async def test_a_header_that_names_another_session_is_corruption(tmp_path: Path) -> None:
    _, data, _ = await _two_turn_file(tmp_path)
    (tmp_path / "other.jsonl").write_bytes(data)

    with pytest.raises(SessionCorruptError, match="names session 'torn'"):
        await JsonlSessionStore(tmp_path).load("other")


async def test_an_incomplete_header_is_corruption(tmp_path: Path) -> None:
    (tmp_path / "torn.jsonl").write_bytes(b'{"type":"session","version":0,"id":"torn"')

    with pytest.raises(SessionCorruptError, match="header line is incomplete"):
        await JsonlSessionStore(tmp_path).load("torn")
