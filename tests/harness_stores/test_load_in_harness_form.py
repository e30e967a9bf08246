"""load() on a harness root: the session is owned as dsh's own files are, crash repair,
``session/end-seed`` and later turns are appended in the artifact's own form (one zstd
frame per batch, packed rows where it packs), the untouched prefix keeps its bytes,
and the harness's codecs read the result as the session dsh holds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from session_stores.scenarios import answer, open_turn

from dsh_session._harness_format import (
    encode_frame,
    find_session,
    read_session,
    scan_frames,
)
from dsh_session._session import Session
from dsh_session.errors import SessionConflictError
from dsh_session.stores import JsonlSessionStore, LoadReport

from .roots import JSONL_FORMS, artifact, copy_root, wire_events

_PACKED_ROW = b'"type":"text-chunks"'


def _harness_events(root: Path, session_id: str) -> list[object]:
    folder = find_session(root, session_id)
    assert folder is not None
    log = read_session(root, folder)
    assert log.torn is None
    return log.events


async def _load_and_add_a_turn(root: Path, session_id: str) -> tuple[Session, LoadReport]:
    async with JsonlSessionStore(root, mode="open") as store:
        session = await store.load(session_id)
        report = store.load_report(session)
        turn = open_turn(session, "one more question")
        answer(session, turn, 1, "four words of answer")
        await store.flush(session)
    return session, report


@pytest.mark.parametrize("form", JSONL_FORMS)
def test_a_new_turn_is_appended_in_the_harness_form(form: str, tmp_path: Path) -> None:
    root = copy_root(form, tmp_path)
    path = artifact(root, "plain-text")
    before = path.read_bytes()
    session, _ = asyncio.run(_load_and_add_a_turn(root, "plain-text"))
    after = path.read_bytes()
    assert after.startswith(before)
    assert _harness_events(root, "plain-text") == wire_events(session)
    added = after[len(before) :]
    if form == "jsonl-zstd":
        # the end-seed written by load, then the turn: one frame per durable batch
        assert len(scan_frames(after).frames) == len(scan_frames(before).frames) + 2
    else:
        assert (_PACKED_ROW in added) == (form == "jsonl-plain")
        assert added.count(b"\n") == len(added.splitlines())


@pytest.mark.parametrize("form", JSONL_FORMS)
def test_a_crash_cut_is_repaired_in_the_harness_form(form: str, tmp_path: Path) -> None:
    root = copy_root(f"crash/{form}", tmp_path)
    path = artifact(root, "crash-tool-call")
    before = path.read_bytes()
    session, report = asyncio.run(_load_and_add_a_turn(root, "crash-tool-call"))
    assert report.repaired
    assert path.read_bytes().startswith(before)
    assert _harness_events(root, "crash-tool-call") == wire_events(session)


def test_a_loaded_harness_session_has_one_writer(tmp_path: Path) -> None:
    root = copy_root("jsonl-zstd", tmp_path)

    async def run() -> None:
        async with JsonlSessionStore(root, mode="open") as first:
            await first.load("two-tools")
            assert (root / "two-tools.jsonl.lock").exists()
            async with JsonlSessionStore(root, mode="open") as second:
                with pytest.raises(SessionConflictError):
                    await second.load("two-tools")

    asyncio.run(run())


def _event_line(seq: int, kind: str, data: str) -> bytes:
    return f'{{"type":"{kind}","seq":{seq},"time":1796231700000,"data":{data}}}\n'.encode()


_TORN_EVENTS = _event_line(24, "turn/start", '{"turn":2}') + _event_line(
    25, "step/start", '{"turn":2,"step":1}'
)


_RECOVERED_AND_CLOSED = ["turn/start", "step/start", "step/end", "turn/end"]


@pytest.mark.parametrize(
    ("cut", "read_after_prefix"),
    [
        pytest.param(4, _RECOVERED_AND_CLOSED, id="checksum-cut"),
        pytest.param(20, [], id="body-cut"),
    ],
)
def test_a_torn_final_frame_is_set_aside_and_its_complete_events_kept(
    tmp_path: Path, cut: int, read_after_prefix: list[str]
) -> None:
    root = copy_root("jsonl-zstd", tmp_path)
    path = artifact(root, "plain-text")
    intact = path.read_bytes()
    torn = encode_frame(_TORN_EVENTS)[:-cut]
    path.write_bytes(intact + torn)

    async def run() -> tuple[Session, LoadReport, Session]:
        async with JsonlSessionStore(root, mode="read") as reader:
            read, read_report = await reader.read("plain-text")
            assert read_report.torn_tail is not None
            assert read_report.torn_tail.sidecar is None
        async with JsonlSessionStore(root, mode="open") as store:
            session = await store.load("plain-text")
            return session, store.load_report(session), read

    session, report, read = asyncio.run(run())
    assert [event.type for event in read.events[24:]] == read_after_prefix
    assert report.torn_tail is not None and report.torn_tail.sidecar is not None
    assert report.torn_tail.offset == len(intact)
    assert Path(report.torn_tail.sidecar).read_bytes() == torn
    assert path.read_bytes().startswith(intact)
    events = _harness_events(root, "plain-text")
    assert events == wire_events(session)
    assert [e["seq"] for e in events] == list(range(len(events)))  # type: ignore[index]
    types = [e["type"] for e in events[24:]]  # type: ignore[index]
    assert types == [*read_after_prefix, "session/end-seed"]


def test_a_torn_plain_line_is_set_aside(tmp_path: Path) -> None:
    root = copy_root("jsonl-plain", tmp_path)
    path = artifact(root, "two-tools")
    intact = path.read_bytes()
    path.write_bytes(intact + _TORN_EVENTS[:30])

    async def run() -> tuple[Session, LoadReport]:
        async with JsonlSessionStore(root, mode="open") as store:
            session = await store.load("two-tools")
            return session, store.load_report(session)

    session, report = asyncio.run(run())
    assert report.torn_tail is not None and report.torn_tail.sidecar is not None
    assert Path(report.torn_tail.sidecar).read_bytes() == _TORN_EVENTS[:30]
    assert path.read_bytes().startswith(intact)
    assert _harness_events(root, "two-tools") == wire_events(session)
