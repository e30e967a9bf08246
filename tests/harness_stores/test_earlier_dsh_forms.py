"""Logs dsh wrote before it wrote the harness's forms stay readable and appendable.

``tests/fixtures/dsh-earlier`` was written by dsh's own code before the change: flat
``<id>.jsonl`` files and a database of dsh's SQLite layout 1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from session_stores.sqlite_files import layout_of

from dsh_session import Session
from dsh_session.stores import (
    JsonlSessionStore,
    SessionStore,
    SqliteSessionStore,
    open_store,
)

EARLIER = Path(__file__).resolve().parents[1] / "fixtures" / "dsh-earlier"
EXPECTED: dict[str, Any] = json.loads((EARLIER / "expected.json").read_text())


def _one_more_turn(session: Session) -> None:
    turn = session.last_turn + 1
    session.append("turn/start", {"turn": turn})
    session.append(
        "user/message",
        {
            "id": f"later-{turn}",
            "role": "user",
            "content": [{"type": "text", "text": "later"}],
            "source": {"kind": "user"},
        },
    )
    session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def _open(kind: str, tmp_path: Path) -> tuple[str, SessionStore]:
    if kind == "jsonl":
        root = tmp_path / "flat"
        shutil.copytree(EARLIER / "dsh-flat-jsonl", root)
        return f"jsonl:///{root}", open_store(f"jsonl:///{root}")
    database = tmp_path / "layout1.db"
    shutil.copyfile(EARLIER / "dsh-layout1.db", database)
    return f"sqlite:///{database}", open_store(f"sqlite:///{database}")


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
async def test_earlier_logs_load_and_take_appends(kind: str, tmp_path: Path) -> None:
    url, store = _open(kind, tmp_path)
    assert isinstance(store, JsonlSessionStore if kind == "jsonl" else SqliteSessionStore)
    async with store:
        assert sorted(h.id for h in await store.list_sessions()) == ["first", "second"]
        for sid in ("first", "second"):
            session = await store.load(sid)
            expected = EXPECTED[f"{kind}/{sid}"]
            # load resumes the log: it closes the stored prefix with session/end-seed
            assert len(session.events) == expected["events"] + 1
            assert session.events[-1].type == "session/end-seed"
            assert [m.id for m in session.derive_messages()] == expected["derivedMessageIds"]
        _one_more_turn(session)
        await store.flush(session)
    if kind == "jsonl":  # appended in the file's own form: still one plain line per event
        flat = tmp_path / "flat" / "second.jsonl"
        assert len(flat.read_bytes().splitlines()) == 1 + expected["events"] + 1 + 3
    async with open_store(url, mode="read") as reader:
        again, report = await reader.read("second")
    assert report.torn_tail is None
    assert [m.id for m in again.derive_messages()][-1] == "later-3"


async def test_a_new_session_beside_flat_files_takes_the_harness_layout(tmp_path: Path) -> None:
    _, store = _open("jsonl", tmp_path)
    async with store:
        store.attach(Session.create("third"))
    root = tmp_path / "flat"
    assert (root / "_no-cwd" / "third" / "session.jsonl.zstd").is_file()
    async with JsonlSessionStore(root, mode="read") as reader:
        assert sorted(h.id for h in await reader.list_sessions()) == ["first", "second", "third"]


async def test_a_new_database_uses_the_harness_schema(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/new.db"
    async with open_store(url) as store:
        assert isinstance(store, SqliteSessionStore)
        store.attach(Session.create("fresh"))
    assert layout_of(tmp_path / "new.db") == "schema 17"
    async with open_store(url, mode="read") as reader:
        assert isinstance(reader, SqliteSessionStore)
        assert [h.id for h in await reader.list_sessions()] == ["fresh"]
