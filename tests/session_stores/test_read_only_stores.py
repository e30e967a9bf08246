"""Reading never writes: stores opened with ``mode="open"`` or ``"read"`` create
nothing, refuse what is not a dsh store without changing it, and refuse to be written
when read-only. Reading a JSONL folder never opens a FIFO; a SQLite row whose header
names another session is corruption."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from dsh_session._session import Session
from dsh_session.errors import SessionCorruptError, StoreError, StoreNotFoundError, StoreUrlError
from dsh_session.stores import JsonlSessionStore, SqliteSessionStore, StoreMode, open_store

from .scenarios import store_completed_turn
from .sqlite_files import layout_one


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a folder)."""
    return {
        str(path.relative_to(root)): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("mode", ["open", "read"])
def test_a_missing_jsonl_folder_is_refused_and_not_created(tmp_path: Path, mode: StoreMode) -> None:
    with pytest.raises(StoreNotFoundError, match="no such directory") as raised:
        JsonlSessionStore(tmp_path / "typo" / "logs", mode=mode)

    assert raised.value.location == str(tmp_path / "typo" / "logs")
    assert _tree(tmp_path) == {}


def test_a_jsonl_store_that_names_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_bytes(b"mine")

    with pytest.raises(StoreNotFoundError, match="not a directory"):
        JsonlSessionStore(tmp_path / "notes.txt", mode="read")

    assert _tree(tmp_path) == {"notes.txt": b"mine"}


@pytest.mark.parametrize("mode", ["open", "read"])
def test_a_missing_sqlite_file_is_refused_and_not_created(tmp_path: Path, mode: StoreMode) -> None:
    with pytest.raises(StoreNotFoundError, match="no such file"):
        SqliteSessionStore(tmp_path / "typo" / "dsh.db", mode=mode)
    with pytest.raises(StoreNotFoundError, match="no such file"):
        open_store(f"sqlite:///{tmp_path}/dsh.db", mode=mode)

    assert _tree(tmp_path) == {}


def _foreign_database(path: Path, journal_mode: str) -> None:
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA journal_mode={journal_mode}")
    db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO accounts (name) VALUES ('ada')")
    db.commit()
    db.close()


@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
@pytest.mark.parametrize("mode", ["open", "read"])
def test_someone_elses_sqlite_file_is_refused_unchanged(
    tmp_path: Path, mode: StoreMode, journal_mode: str
) -> None:
    path = tmp_path / "app.db"
    _foreign_database(path, journal_mode)
    before = _tree(tmp_path)

    with pytest.raises(StoreNotFoundError, match="without dsh's tables"):
        SqliteSessionStore(path, mode=mode)

    assert _tree(tmp_path) == before == {"app.db": before["app.db"]}
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == journal_mode


@pytest.mark.parametrize(
    "content", [b"", b"just some notes\n", b"SQLite format 3\x00" + b"\xff" * 84]
)
def test_a_file_that_is_not_a_database_is_refused_unchanged(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(content)

    with pytest.raises(StoreNotFoundError):
        SqliteSessionStore(path, mode="read")

    assert _tree(tmp_path) == {"notes.db": content}


async def test_a_read_only_store_reads_and_refuses_every_write(tmp_path: Path) -> None:
    path = tmp_path / "dsh.db"
    async with SqliteSessionStore(path) as writer:
        stored = await store_completed_turn(writer)

    for store in (SqliteSessionStore(path, mode="read"), JsonlSessionStore(tmp_path, mode="read")):
        async with store:
            if isinstance(store, SqliteSessionStore):
                session, _ = await store.read(stored.id)
                assert list(session.events) == list(stored.events)
                assert [h.id for h in await store.list_sessions()] == [stored.id]
            with pytest.raises(StoreError, match="read-only"):
                store.attach(Session.create())
            with pytest.raises(StoreError, match="read-only"):
                await store.load(stored.id)


async def test_open_mode_writes_into_an_existing_store(tmp_path: Path) -> None:
    path = tmp_path / "dsh.db"
    async with SqliteSessionStore(path) as writer:
        await store_completed_turn(writer)

    async with SqliteSessionStore(path, mode="open") as store:
        added = await store_completed_turn(store)

    async with SqliteSessionStore(path, mode="read") as reader:
        assert added.id in [header.id for header in await reader.list_sessions()]


async def test_a_fifo_in_a_jsonl_folder_is_never_opened(tmp_path: Path) -> None:
    async with JsonlSessionStore(tmp_path) as writer:
        stored = await store_completed_turn(writer)
    os.mkfifo(tmp_path / "pipe.jsonl")  # opening it for reading would block forever

    store = JsonlSessionStore(tmp_path, mode="read")
    headers = await store.list_sessions()
    with pytest.raises(StoreError, match="a FIFO"):
        await store.read("pipe")

    assert [header.id for header in headers] == [stored.id]


async def test_a_sqlite_header_naming_another_session_is_corruption(tmp_path: Path) -> None:
    path = layout_one(tmp_path / "dsh.db")
    async with SqliteSessionStore(path) as writer:
        first = await store_completed_turn(writer)
        second = await store_completed_turn(writer)
    db = sqlite3.connect(path)
    (header,) = db.execute("SELECT header FROM dsh_sessions WHERE id = ?", (first.id,)).fetchone()
    db.execute("UPDATE dsh_sessions SET header = ? WHERE id = ?", (header, second.id))
    db.commit()
    db.close()

    async with SqliteSessionStore(path, mode="read") as store:
        with pytest.raises(SessionCorruptError, match=first.id) as raised:
            await store.read(second.id)
        listed = [header.id for header in await store.list_sessions()]

    assert second.id in str(raised.value)
    assert raised.value.field == "id"
    assert listed == [first.id]


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("sqlite:///dsh%00.db", "control characters"),
        ("sqlite:///dsh\x00.db", "control characters"),
        ("jsonl:///logs\x1b[0m", "control characters"),
        ("sqlite:///dsh%zz.db", "two hex digits"),
        ("sqlite:///dsh%.db", "two hex digits"),
        ("sqlite:///dsh%ff.db", "UTF-8"),
        ("sqlite:///dsh\udcff.db", "lone surrogate"),
        ("sqlite:////", "no path"),
        ("jsonl:///%2F", "no path"),
        ("sqlite:///folder/", "names a file"),
        ("SQLITE:///dsh.db", "unknown scheme"),
        ("file:///dsh.db", "unknown scheme"),
        ("://dsh.db", "unknown scheme"),
    ],
)
def test_malformed_store_urls_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, problem: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreUrlError, match=problem) as raised:
        open_store(url, mode="read")
    assert raised.value.url == url
    assert _tree(tmp_path) == {}
