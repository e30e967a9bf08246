"""New sessions in dsh's JSONL store are written as the harness writes them.

Every fixture scenario is replayed through the public API (``Session.append`` with the
harness's event times, ``store.flush`` where the harness ended a durable batch) into a
fresh store, in each of the three forms, and the file is compared with the one the
harness wrote: the same folder, header line (byte for byte), zstd frames (one per
batch, each the harness's own encoding of its text), packed rows and event records.
Records byte for byte too, except that the keys of a message object keep dsh's order
(``id, role, content, source``; the harness writes ``content, source, role, id``):
JSON key order is no part of either reader's format.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness_format.fixtures import SCENARIOS, artifact, expected_session

from dsh_session import Session
from dsh_session._harness_format import (
    decode_frame,
    encode_frame,
    expand_record,
    list_session_folders,
    read_log,
    scan_frames,
)
from dsh_session._header import SessionHeader
from dsh_session.errors import StoreError
from dsh_session.stores import JsonlSessionStore, open_store

FORMS: dict[str, dict[str, Any]] = {
    "jsonl-zstd": {},
    "jsonl-plain": {"compression": "none"},
    "jsonl-unpacked": {"compression": "none", "pack_chunks": False},
}


def _batch_sizes(scenario: str) -> list[int]:
    """How many events the harness wrote in each durable batch (one zstd frame each)."""
    data = artifact("jsonl-zstd", scenario).read_bytes()
    sizes = []
    for frame in scan_frames(data).frames[1:]:
        records = [
            json.loads(line) for line in decode_frame(data[frame.start : frame.end]).splitlines()
        ]
        sizes.append(sum(len(expand_record(record)) for record in records))
    return sizes


def _times(events: list[dict[str, Any]]) -> Iterator[int]:
    yield from (event["time"] for event in events)


async def _replay(
    store: JsonlSessionStore, scenario: str, monkeypatch: pytest.MonkeyPatch
) -> Session:
    """Write one scenario's events through a session attached to ``store``, flushing
    where the harness's batches ended."""
    expected = expected_session(scenario)
    events: list[dict[str, Any]] = expected["events"]
    times = _times(events)
    monkeypatch.setattr("dsh_session._session.now_ms", lambda: next(times))
    header = SessionHeader.model_validate(expected["header"])
    session = Session.create(header=header)
    store.attach(session)
    position = 0
    for size in _batch_sizes(scenario):
        for event in events[position : position + size]:
            session.append(
                event["type"],
                event["data"],
                surface_op=event.get("surfaceOp"),
                source_event_seqs=event.get("sourceEventSeqs"),
            )
        position += size
        await store.flush(session)
    assert position == len(events)
    return session


def _plaintext(data: bytes, compressed: bool) -> list[bytes]:
    """The artifact's text per durable batch (the header first); a plain file is one."""
    if not compressed:
        return [data]
    return [decode_frame(data[f.start : f.end]) for f in scan_frames(data).frames]


def _assert_same_records(ours: bytes, theirs: bytes) -> None:
    mine, expected = ours.splitlines(), theirs.splitlines()
    assert len(mine) == len(expected)
    for line, want in zip(mine, expected, strict=True):
        assert json.loads(line) == json.loads(want)
        if b'"role":' not in want:  # no message object: the same bytes
            assert line == want


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_new_session_is_written_as_the_harness_wrote_it(
    scenario: str, form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = JsonlSessionStore(tmp_path, **FORMS[form])
    async with store:
        session = await _replay(store, scenario, monkeypatch)
    written = artifact(form, scenario)
    path = tmp_path / written.relative_to(written.parents[2])
    assert path == store.path_of(session.id)
    compressed = form == "jsonl-zstd"
    ours, theirs = path.read_bytes(), written.read_bytes()
    if compressed:  # the header frame
        mine, harness = scan_frames(ours).frames[0], scan_frames(theirs).frames[0]
        assert ours[mine.start : mine.end] == theirs[harness.start : harness.end]
    else:
        assert ours.split(b"\n", 1)[0] == theirs.split(b"\n", 1)[0]
    our_batches, their_batches = _plaintext(ours, compressed), _plaintext(theirs, compressed)
    assert len(our_batches) == len(their_batches)
    for text, want in zip(our_batches, their_batches, strict=True):
        _assert_same_records(text, want)
    if compressed:
        frames = [ours[f.start : f.end] for f in scan_frames(ours).frames]
        assert b"".join(frames) == ours
        assert [encode_frame(text) for text in our_batches] == frames


async def test_default_layout_modes_and_header(tmp_path: Path) -> None:
    """Folders 0700 and the log 0600 as the harness creates them; the header line
    carries ``delegationDepth``; the writer's lock sits at the top of the root, where
    the harness looks for no sessions."""
    root = tmp_path / "root"
    store = JsonlSessionStore(root)
    session = Session.create("fresh")
    store.attach(session)
    await store.flush(session)
    assert [p.name for p in root.iterdir() if p.is_file()] == ["fresh.jsonl.lock"]
    await store.close()
    log = root / "_no-cwd" / "fresh" / "session.jsonl.zstd"
    assert [folder.path for folder in list_session_folders(root)] == [log]
    for folder in (log.parent, log.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert sorted(os.listdir(log.parent)) == ["session.jsonl.zstd"]
    header = read_log(log.read_bytes(), compressed=True).header
    assert header == {
        "type": "session",
        "version": 0,
        "id": "fresh",
        "createdAt": session.header.created_at,
        "delegationDepth": 0,
    }


async def test_a_cwd_keys_the_project_folder(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path, compression="none")
    session = Session.create(
        "in-project", header=SessionHeader(id="in-project", created_at=1, cwd="/w/app")
    )
    store.attach(session)
    await store.close()
    assert store.path_of(session.id) == tmp_path / "--w-app--" / "in-project" / "session.jsonl"
    loaded, _ = await JsonlSessionStore(tmp_path, mode="read").read("in-project")
    assert loaded.header == session.header  # the line's delegationDepth 0 is "top level"


async def test_store_without_compression_follows_the_root(tmp_path: Path) -> None:
    """A root the harness keeps plain gets plain new sessions; asking for zstd there
    is refused, since the harness would then refuse the whole root."""
    async with JsonlSessionStore(tmp_path, compression="none") as store:
        store.attach(Session.create("first"))
    async with JsonlSessionStore(tmp_path) as store:
        store.attach(Session.create("second"))
    assert (tmp_path / "_no-cwd" / "second" / "session.jsonl").is_file()
    store = JsonlSessionStore(tmp_path, compression="zstd")
    session = Session.create("third")
    store.attach(session)
    with pytest.raises(StoreError, match=r"holds sessions as session\.jsonl,"):
        await store.flush(session)
    store.detach(session)
    await store.close()
    assert not (tmp_path / "_no-cwd" / "third").exists()


def test_url_query_chooses_the_form(tmp_path: Path) -> None:
    store = open_store(f"jsonl:///{tmp_path}?compression=none&pack_chunks=false")
    assert isinstance(store, JsonlSessionStore)
    assert (store.compression, store.pack_chunks) == ("none", False)
    default = open_store(f"jsonl:///{tmp_path}")
    assert isinstance(default, JsonlSessionStore)
    assert (default.compression, default.pack_chunks) == (None, True)
