"""Reading a harness JSONL artifact straight from its record lines gives exactly what the
full path (decode, expand, migrate, check, validate) gives, and is taken only where it
provably does: never for a legacy record, a coerced value or a damaged artifact."""

from __future__ import annotations

import asyncio
import json
from dataclasses import astuple, replace
from pathlib import Path
from typing import Any

import pytest
from session_stores.scenarios import complete_turn, interrupted_turn

from dsh_session import EVENT_TYPES
from dsh_session._harness_format import (
    KNOWN_SESSION_EVENT_TYPES,
    SessionFolder,
    check_vocabulary,
    list_session_folders,
    migrate_legacy_events,
)
from dsh_session._session import Session
from dsh_session.errors import SessionError
from dsh_session.stores import JsonlSessionStore
from dsh_session.stores._codec import dump_event
from dsh_session.stores._current_records import current_events
from dsh_session.stores._harness_jsonl import read_current, read_decoded

from .roots import CRASH_FORMS, JSONL_FORMS, copy_root

_HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
_TURN = {"turn": 1, "step": 1}


def _outcome(root: Path, folder: SessionFolder, read: Any) -> Any:
    """Everything a read gives (the pack decision resolved), or the error it raises."""
    data = folder.path.read_bytes()
    try:
        result = read(root, folder, data, True)
    except SessionError as error:
        return type(error), str(error)
    if result is None:
        return None
    stored, artifact = result
    packs = artifact.pack_chunks if isinstance(artifact.pack_chunks, bool) else None
    if packs is None:
        packs = artifact.pack_chunks()
    # The session a read checked while parsing is the reader's own; the log is compared.
    log = astuple(replace(stored, session=None))
    return log, artifact.compressed, packs, artifact.valid_end, artifact.carry


def _same_as_full_path(root: Path) -> bool:
    """Assert both paths agree on every artifact in ``root``; whether the direct path
    read all of them."""
    taken = True
    for folder in list_session_folders(root):
        full = _outcome(root, folder, read_decoded)
        current = _outcome(root, folder, read_current)
        assert current in (None, full), folder.path
        taken = taken and current is not None
    return taken


def _add_turns(session: Session) -> None:
    complete_turn(session, tool_output="3.25 is a float in text")
    config = {"provider": "p", "model": "m", "temperature": 0.25}
    session.append("request/header", {"header": {"config": config}, "reason": "change"})
    interrupted_turn(session)


def _dsh_session() -> Session:
    session = Session.create("s")
    complete_turn(session)
    _add_turns(session)
    return session


@pytest.mark.parametrize("form", [*JSONL_FORMS, *CRASH_FORMS])
def test_harness_fixtures_read_alike(form: str, tmp_path: Path) -> None:
    root = copy_root(form, tmp_path)
    taken = _same_as_full_path(root)
    assert taken or form in CRASH_FORMS  # which hold torn tails and a legacy log


@pytest.mark.parametrize(
    "form",
    [
        {"compression": "zstd"},
        {"compression": "none"},
        {"compression": "none", "pack_chunks": False},
    ],
)
def test_dsh_written_logs_read_directly_and_alike(form: dict[str, Any], tmp_path: Path) -> None:
    async def write() -> None:
        async with JsonlSessionStore(tmp_path, **form) as store:
            session = Session.create("s")
            complete_turn(session)
            store.attach(session)
            await store.flush(session)
            _add_turns(session)  # a second batch (its own zstd frame)

    asyncio.run(write())
    assert _same_as_full_path(tmp_path)


def _log(tmp_path: Path, records: list[bytes]) -> Path:
    folder = tmp_path / "_no-cwd" / "s"
    folder.mkdir(parents=True)
    header = json.dumps(_HEADER, separators=(",", ":")).encode()
    (folder / "session.jsonl").write_bytes(b"\n".join([header, *records, b""]))
    return tmp_path


def _records(session: Session) -> list[bytes]:
    return [dump_event(event) for event in session.events]


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


_TOOL = {"turn": 1, "step": 1, "callId": "c", "content": [], "isError": False}
_LEGACY = [
    {"type": "turn/start", "data": {"turn": 1, "trigger": {"kind": "user"}}},
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "aborted"}}},
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "disposed"}}},
    {
        "type": "turn/end",
        "data": {"turn": 1, "reason": {"kind": "error", "step": 1, "message": "m"}},
    },
    {
        "type": "turn/end",
        "data": {
            "turn": 1,
            "reason": {"kind": "error", "step": 1, "failure": {"message": "m", "code": "X"}},
        },
    },
    {"type": "turn/end", "data": {"turn": 1.0, "reason": {"kind": "completed"}}},
    {"type": "turn/end", "data": {"turn": True, "reason": {"kind": "completed"}}},
    {"type": "steering/message", "data": {"turn": 1, "content": [], "source": {"kind": "user"}}},
    {
        "type": "steering/message",
        "data": {"turn": 1, "message": {"id": "m", "role": "user", "content": []}},
    },
    {"type": "user/message", "data": {"content": [], "source": {"kind": "user"}}},
    {
        "type": "assistant/message",
        "data": {
            "turn": 1,
            "step": 1,
            "content": [],
            "provenance": {"provider": "p", "model": "m"},
        },
    },
    {"type": "tool/result", "surfaceOp": "append", "data": _TOOL},
    {"type": "tool/result", "surfaceOp": {"op": "replace", "start": 0, "end": 0}, "data": _TOOL},
    {"type": "request/header", "data": {"header": {"config": {}}, "reason": "fallback"}},
    {"type": "request/header-delta", "data": {}},
    {"type": "mode/set", "data": {}},
]


@pytest.mark.parametrize("ignorable", [False, True])
@pytest.mark.parametrize("legacy", _LEGACY, ids=lambda record: str(record["type"]))
def test_no_legacy_or_refused_record_is_read_directly(
    legacy: dict[str, Any], ignorable: bool
) -> None:
    record = {"type": legacy["type"], "seq": 0, "time": 1, **legacy}
    if ignorable:
        record["ignorable"] = True
    assert current_events([_json(record)]) is None


def test_every_dsh_type_is_a_harness_type_read_directly() -> None:
    assert EVENT_TYPES <= KNOWN_SESSION_EVENT_TYPES


def test_records_read_directly_pass_the_full_path_untouched(tmp_path: Path) -> None:
    """For every record the direct path takes, migration and the vocabulary check are
    the identity; the records are those of the fixtures and of a dsh session."""
    roots = [copy_root(form, tmp_path) for form in JSONL_FORMS]
    lines = [
        line
        for root in roots
        for folder in list_session_folders(root)
        if not folder.compressed
        for line in folder.path.read_bytes().splitlines()[1:]
    ]
    lines += _records(_dsh_session())
    for line in lines:
        events = current_events([line])
        if events is None or len(events) != 1:
            continue  # not taken, or a packed row (expanded as on the full path)
        record = json.loads(line)
        record["seq"] = 0
        assert migrate_legacy_events([record], "s") == [record]
        check_vocabulary([record], "s")


def _edge_lines() -> list[bytes]:
    start = b'{"type":"turn/start","seq":%s,"time":1,"data":{"turn":1}}'
    title = b'{"type":"session/title","seq":0,"time":1,"data":%s}'
    row = (
        b'{"type":"text-chunks","seq0":%s,"time0":1,'
        b'"data":{"turn":1,"step":1,"index":0,"dt":[0],"texts":["a","b"]}}'
    )
    return [
        start % b"1",
        row % b"0",
        row % b"5",
        row.replace(b"text-chunks", b"reasoning-chunks") % b"0",
        row.replace(b'"dt":[0]', b'"dt":[]') % b"0",
        start % b'"0"',
        start % b"false",
        start % b"0.0",
        start % b"-0",
        start % b'0,"seq":"0"',
        start % b'1,"seq":0',
        b'{"type":"step/start","type":"turn/start","seq":0,"time":1,"data":{"turn":1}}',
        b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1},"ignorable":null}',
        b'\xef\xbb\xbf{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}',
        b' \t{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\r',
        b'\x0c{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}',
        b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}} {}',
        title % b'{"t":"\\ud800"}',
        title % b'{"t":"\xed\xa0\x80"}',
        title % b'{"t":"\xff"}',
        title % b'{"t":"a\tb"}',
        title % b'{"t":"\\u00e9\\/"}',
        title % b'{"t":NaN}',
        title % b'{"t":1e400}',
        title % b'{"t":0.1,"u":12345678901234567890123,"v":-0.0,"w":1E5}',
        title % b'{"a":1,"b":2,"a":3}',
        title % (b"[" * 150 + b"]" * 150),
        title % (b"[" * 1200 + b"]" * 1200),
        b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}',
        b"",
    ]


@pytest.mark.parametrize("line", _edge_lines())
def test_edge_lines_read_alike(line: bytes, tmp_path: Path) -> None:
    session = Session.create("s")
    complete_turn(session)
    following = [dump_event(event) for event in session.events]
    for position, records in enumerate(([line], [line, *following[1:]])):
        root = _log(tmp_path / str(position), records)
        _same_as_full_path(root)


def test_chunk_runs_decide_packing_alike(tmp_path: Path) -> None:
    """A plain log's packing is decided from its raw records, explicit nulls and all."""
    session = Session.create("s")
    session.append("turn/start", {"turn": 1})
    session.append("step/start", _TURN)
    for text in ("a", "b", "c"):
        chunk = {"type": "text-delta", "index": 0, "text": text}
        session.append("assistant/chunk", {**_TURN, "chunk": chunk})
    records = _records(session)
    spelled_out = [r[:-1] + b',"ignorable":null}' if b"chunk" in r else r for r in records]
    for name, lines in (("plain", records), ("nulls", spelled_out)):
        root = _log(tmp_path / name, lines)
        assert _same_as_full_path(root)
        [folder] = list_session_folders(root)
        assert _outcome(root, folder, read_current)[2] is (name == "nulls")
