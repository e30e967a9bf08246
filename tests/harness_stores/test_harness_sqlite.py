"""The harness's SQLite database (schema 17) through ``open_store("sqlite:///...")``:
listed and read as the harness holds it, loaded and appended to in its own schema so
the harness could resume it; dsh's own databases keep opening as before."""

from __future__ import annotations

import asyncio
import gc
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from session_stores.scenarios import answer, complete_turn, open_turn
from session_stores.sqlite_files import layout_of, layout_one

from dsh_session._harness_format import (
    append_batch,
    check_schema,
    read_database,
)
from dsh_session._session import Session
from dsh_session.errors import (
    SessionConflictError,
    SessionNotFoundError,
    StoreError,
    StoreNotFoundError,
)
from dsh_session.stores import SessionStore, SqliteSessionStore, StoreMode, open_store

from .roots import SCENARIOS, TS_LOGS, expected_session, tree, wire_events

_DB = TS_LOGS / "sqlite" / "ts.db"


@pytest.fixture
def database(tmp_path: Path) -> Path:
    folder = tmp_path / "db"
    folder.mkdir()
    shutil.copy(_DB, folder / "ts.db")
    return folder / "ts.db"


def _harness_events(path: Path, session_id: str) -> list[object]:
    [stored] = [s for s in read_database(path) if s.header["id"] == session_id]
    assert stored.torn_from is None
    return stored.events


def _rows(path: Path, session_id: str) -> list[tuple[object, ...]]:
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return connection.execute(
            "SELECT * FROM events WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
    finally:
        connection.close()


def test_open_store_detects_schema_17_and_lists_it(database: Path) -> None:
    async def run() -> list[str]:
        async with open_store(f"sqlite:///{database}", mode="read") as store:
            assert isinstance(store, SqliteSessionStore)
            assert layout_of(database) == "schema 17"
            return sorted(header.id for header in await store.list_sessions())

    before = tree(database.parent)
    assert asyncio.run(run()) == sorted(SCENARIOS)
    assert tree(database.parent) == before


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_session_reads_as_the_harness_held_it(database: Path, scenario: str) -> None:
    async def run() -> Session:
        async with open_store(f"sqlite:///{database}", mode="read") as store:
            session, report = await store.read(scenario)
            assert not report.appended
            return session

    before = tree(database.parent)
    session = asyncio.run(run())
    expected = expected_session(scenario)
    assert wire_events(session) == expected["events"]
    assert [m.id for m in session.derive_messages()] == expected["derivedMessageIds"]
    assert tree(database.parent) == before


def test_reads_leave_the_garbage_collector_as_they_found_it(database: Path) -> None:
    """The read pauses the collector while rows decode; a failed read restores it too."""

    async def run() -> None:
        async with open_store(f"sqlite:///{database}", mode="read") as store:
            await store.read(SCENARIOS[0])
            assert gc.isenabled()
            with pytest.raises(SessionNotFoundError):
                await store.read("no-such-session")
            assert gc.isenabled()
            gc.disable()
            try:
                await store.read(SCENARIOS[0])
                assert not gc.isenabled()
            finally:
                gc.enable()

    asyncio.run(run())


def test_load_and_a_new_turn_are_appended_in_schema_17(database: Path) -> None:
    old_rows = _rows(database, "two-tools")

    async def run() -> Session:
        async with open_store(f"sqlite:///{database}", mode="open") as store:
            session = await store.load("two-tools")
            assert Path(f"{database}.two-tools.lock").exists()
            turn = open_turn(session, "and one more")
            answer(session, turn, 1, "a packed answer of words")
            await store.flush(session)
            return session

    session = asyncio.run(run())
    new_rows = _rows(database, "two-tools")
    assert new_rows[: len(old_rows)] == old_rows
    assert any(row[2] == "text-chunks" for row in new_rows[len(old_rows) :])
    assert _harness_events(database, "two-tools") == wire_events(session)
    connection = sqlite3.connect(database)
    try:
        check_schema(connection, where=str(database))  # no table of dsh's was added
    finally:
        connection.close()


def test_a_second_writer_is_refused(database: Path) -> None:
    async def run() -> None:
        async with SqliteSessionStore(database, mode="open") as first:
            await first.load("plain-text")
            async with SqliteSessionStore(database, mode="open") as second:
                with pytest.raises(SessionConflictError):
                    await second.load("plain-text")

    asyncio.run(run())


def test_rows_appended_behind_the_store_fence_its_next_batch(database: Path) -> None:
    async def run() -> None:
        store = SqliteSessionStore(database, mode="open")
        session = await store.load("plain-text")
        intruder = sqlite3.connect(database, isolation_level=None)
        try:
            extra = {"type": "session/end-seed", "seq": session.seq, "time": 1, "data": {}}
            append_batch(intruder, {"id": "plain-text"}, [extra])
        finally:
            intruder.close()
        complete_turn(session)
        with pytest.raises(StoreError, match="starts at seq"):
            await store.flush(session)
        with pytest.raises(StoreError):
            await store.close()

    asyncio.run(run())
    events = _harness_events(database, "plain-text")
    assert [e["type"] for e in events[-2:]] == ["session/end-seed", "session/end-seed"]  # type: ignore[index]


def test_a_new_session_is_written_in_schema_17(database: Path) -> None:
    async def run() -> Session:
        async with open_store(f"sqlite:///{database}") as store:
            session = Session.create()
            complete_turn(session)
            store.attach(session)
            await store.flush(session)
            return session

    session = asyncio.run(run())
    [stored] = [s for s in read_database(database) if s.header["id"] == session.id]
    assert stored.header["delegationDepth"] == 0
    assert stored.events == wire_events(session)


def test_a_new_session_cannot_take_a_stored_id(database: Path) -> None:
    old_rows = _rows(database, "plain-text")

    async def run() -> None:
        store = open_store(f"sqlite:///{database}")
        duplicate = Session.create("plain-text")
        duplicate.append("session/end-seed", {})
        store.attach(duplicate)
        with pytest.raises(StoreError, match="already exists"):
            await store.flush(duplicate)
        with pytest.raises(StoreError, match="not durable"):
            await store.close()

    asyncio.run(run())
    assert _rows(database, "plain-text") == old_rows


def test_a_missing_file_is_created_as_schema_17_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with pytest.raises(StoreNotFoundError):
        SqliteSessionStore(path, mode="open")
    assert not path.exists()

    async def run() -> None:
        async with SqliteSessionStore(path) as store:
            assert await store.list_sessions() == []

    asyncio.run(run())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_database(path) == []


@pytest.mark.parametrize("mode", ["create", "open", "read"])
def test_the_one_sqlite_class_opens_a_harness_database_as_open_store_does(
    database: Path, mode: StoreMode
) -> None:
    """What used to be refused (the harness's database given to ``SqliteSessionStore``)
    opens in every mode, lists what ``open_store`` lists, and a reader changes nothing."""

    async def sessions(store: SessionStore) -> list[str]:
        async with store:
            return sorted(header.id for header in await store.list_sessions())

    before = tree(database.parent)
    by_class = asyncio.run(sessions(SqliteSessionStore(database, mode=mode)))
    by_url = asyncio.run(sessions(open_store(f"sqlite:///{database}", mode=mode)))
    assert by_class == by_url == sorted(SCENARIOS)
    assert layout_of(database) == "schema 17"
    if mode == "read":
        assert tree(database.parent) == before


def test_a_dsh_database_still_opens_as_dsh_own_store(tmp_path: Path) -> None:
    path = layout_one(tmp_path / "dsh.db")

    async def run() -> None:
        async with SqliteSessionStore(path) as store:
            session = Session.create()
            complete_turn(session)
            store.attach(session)
        async with open_store(f"sqlite:///{path}", mode="read") as reader:
            assert isinstance(reader, SqliteSessionStore)
            [header] = await reader.list_sessions()
            read, _ = await reader.read(header.id)
            assert wire_events(read) == wire_events(session)

    asyncio.run(run())
    assert layout_of(path) == "layout 1"


def test_a_crash_cut_is_repaired_in_schema_17(database: Path) -> None:
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        [(call_seq,)] = connection.execute(
            "SELECT min(seq) FROM events WHERE session_id = 'two-tools' AND type = 'tool/call'"
        ).fetchall()
        connection.execute(
            "DELETE FROM events WHERE session_id = 'two-tools' AND seq > ?", (call_seq,)
        )
    finally:
        connection.close()
    old_rows = _rows(database, "two-tools")

    async def run() -> tuple[Session, bool]:
        async with open_store(f"sqlite:///{database}", mode="open") as store:
            session = await store.load("two-tools")
            return session, store.load_report(session).repaired

    session, repaired = asyncio.run(run())
    assert repaired
    assert _rows(database, "two-tools")[: len(old_rows)] == old_rows
    assert _harness_events(database, "two-tools") == wire_events(session)
    assert session.events[-1].type == "session/end-seed"


def test_an_id_dsh_cannot_use_is_left_out_of_the_list(database: Path) -> None:
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        connection.execute("UPDATE sessions SET id = 'has space' WHERE id = 'plain-text'")
    finally:
        connection.close()

    async def run() -> list[str]:
        async with open_store(f"sqlite:///{database}", mode="read") as store:
            return sorted(header.id for header in await store.list_sessions())

    assert asyncio.run(run()) == sorted(s for s in SCENARIOS if s != "plain-text")
