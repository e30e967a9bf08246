"""Load never destroys bytes: a torn tail goes to a sidecar before the log is cut, an
inspecting read moves nothing, and rows that parse are never mistaken for a torn tail."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_session._session import Session
from dsh_session.errors import SessionCorruptError, StoreError
from dsh_session.stores import JsonlSessionStore
from dsh_session.stores._torn_sidecar import set_aside

from .flat_logs import flat_log
from .scenarios import complete_turn, open_turn, request_tools


async def _stored_log(directory: Path) -> tuple[Session, bytes]:
    """A flat log of one turn, as dsh wrote it before the harness layout."""
    session = Session.create("kept")
    complete_turn(session)
    return session, flat_log(session)


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in directory.iterdir()}


async def test_load_moves_a_torn_tail_to_a_sidecar_and_keeps_the_prefix(tmp_path: Path) -> None:
    _, committed = await _stored_log(tmp_path)
    torn = b'{"seq":99,"type":"turn/st'
    log = tmp_path / "kept.jsonl"
    log.write_bytes(committed + torn)
    store = JsonlSessionStore(tmp_path)

    loaded = await store.load("kept")
    report = store.load_report(loaded).torn_tail
    await store.close()

    assert report is not None and report.sidecar is not None
    sidecar = Path(report.sidecar)
    assert sidecar.parent == tmp_path
    assert sidecar.name.startswith(f"kept.jsonl.torn-{len(committed)}-")
    assert sidecar.read_bytes() == torn
    assert report.dropped_bytes == len(torn)
    assert f"moved to {sidecar}" in report.describe()
    after = log.read_bytes()
    assert after[: len(committed)] == committed
    assert [json.loads(line)["type"] for line in after[len(committed) :].splitlines()] == [
        "session/end-seed"
    ]


async def test_read_reports_a_torn_tail_and_moves_nothing(tmp_path: Path) -> None:
    _, committed = await _stored_log(tmp_path)
    (tmp_path / "kept.jsonl").write_bytes(committed + b'{"seq":')
    before = _files(tmp_path)

    _, report = await JsonlSessionStore(tmp_path, mode="read").read("kept")

    assert report.torn_tail is not None
    assert report.torn_tail.sidecar is None
    assert "left in the file" in report.torn_tail.describe()
    assert _files(tmp_path) == before


def test_a_second_sidecar_at_the_same_offset_never_replaces_the_first(tmp_path: Path) -> None:
    log = tmp_path / "kept.jsonl"
    log.write_bytes(b"")

    first = set_aside(log, 10, b"first")
    second = set_aside(log, 10, b"second")
    third = set_aside(log, 10, b"third")

    assert len({first, second, third}) == 3
    assert [first.read_bytes(), second.read_bytes(), third.read_bytes()] == [
        b"first",
        b"second",
        b"third",
    ]
    assert not [path for path in tmp_path.iterdir() if path.name.endswith(".tmp")]


def _wire(session: Session, start: int) -> list[bytes]:
    return [json.dumps(event.model_dump(mode="json")).encode() for event in session.events[start:]]


async def test_rows_of_an_unknown_shape_are_corruption_and_the_file_is_untouched(
    tmp_path: Path,
) -> None:
    # What was found: such a tail was cut as "torn", losing a committed assistant
    # message and tool call written after the unknown row.
    session, committed = await _stored_log(tmp_path)
    start = session.seq
    turn = open_turn(session, "and now?")
    request_tools(session, turn, 1, ["call-9"])
    rows = _wire(session, start)
    rows.insert(1, json.dumps({"kind": "note", "text": "written by another tool"}).encode())
    data = committed + b"".join(row + b"\n" for row in rows)
    (tmp_path / "kept.jsonl").write_bytes(data)
    before = _files(tmp_path)

    with pytest.raises(SessionCorruptError, match="found seq None") as raised:
        await JsonlSessionStore(tmp_path).load("kept")

    assert raised.value.seq == start + 1
    assert _files(tmp_path) == before


async def test_a_json_row_without_a_seq_at_the_end_is_corruption(tmp_path: Path) -> None:
    session, committed = await _stored_log(tmp_path)
    data = committed + b'{"kind": "note"}\n'
    (tmp_path / "kept.jsonl").write_bytes(data)

    with pytest.raises(SessionCorruptError, match="found seq None") as raised:
        await JsonlSessionStore(tmp_path).load("kept")

    assert raised.value.seq == session.seq
    assert (tmp_path / "kept.jsonl").read_bytes() == data


async def test_a_failed_sidecar_write_leaves_the_log_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, committed = await _stored_log(tmp_path)
    log = tmp_path / "kept.jsonl"
    log.write_bytes(committed + b'{"seq":')
    before = _files(tmp_path)

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "simulated full disk")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(StoreError, match="log was left as it is"):
        await JsonlSessionStore(tmp_path).load("kept")

    assert _files(tmp_path) == before


_LOAD_THEN_DIE = """
import asyncio, os, signal, sys
from dsh_session.stores import JsonlSessionStore, _jsonl as jsonl

real = jsonl.set_aside

def set_aside_then_crash(*args):
    real(*args)
    os.kill(os.getpid(), signal.SIGKILL)  # after the sidecar, before the log is cut

jsonl.set_aside = set_aside_then_crash
asyncio.run(JsonlSessionStore(sys.argv[1]).load("kept"))
"""


async def test_a_crash_between_sidecar_and_cut_loses_nothing(tmp_path: Path) -> None:
    _, committed = await _stored_log(tmp_path)
    torn = b'{"seq":20,"type":"assistant/ch'
    log = tmp_path / "kept.jsonl"
    log.write_bytes(committed + torn)

    child = subprocess.run(
        [sys.executable, "-c", _LOAD_THEN_DIE, str(tmp_path)],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )

    assert child.returncode == -signal.SIGKILL, child.stderr
    assert log.read_bytes() == committed + torn
    (first,) = [path for path in tmp_path.iterdir() if ".torn-" in path.name]
    assert first.read_bytes() == torn

    store = JsonlSessionStore(tmp_path)
    loaded = await store.load("kept")
    report = store.load_report(loaded).torn_tail
    await store.close()

    assert report is not None and report.sidecar is not None
    assert Path(report.sidecar) != first
    assert first.read_bytes() == torn  # the earlier sidecar is never overwritten
    assert Path(report.sidecar).read_bytes() == torn
    assert log.read_bytes().startswith(committed)
    assert torn not in log.read_bytes()
