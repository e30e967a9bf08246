"""One writer per session: a second writer (another process or another store object)
is refused with SessionConflictError and writes nothing; every event the owner flushed
survives; ownership ends with detach, close or the owner's death; readers take none."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

import pytest

from dsh_session._header import SessionId
from dsh_session._session import Session
from dsh_session.errors import SessionConflictError, StoreError
from dsh_session.stores import MemorySessionStore, PostgresSessionStore, SqliteSessionStore
from dsh_session.stores._sqlite_layout_one import DshLayout

from .conftest import StoreFactory
from .scenarios import complete_turn, store_completed_turn
from .sqlite_files import layout_one
from .two_writer_child import LOSER_MARK
from .writer_processes import (
    flushed_events,
    location_for,
    open_backend,
    report_lines,
    start_child,
    store_session,
    wait_for,
)


def _stored_bytes(backend: str, location: Path) -> bytes:
    if backend == "sqlite":
        return b"".join(path.read_bytes() for path in location.parent.glob(f"{location.name}*"))
    return b"".join(path.read_bytes() for path in location.glob("*.jsonl"))


@pytest.mark.parametrize("backend", ["sqlite", "jsonl"])
async def test_a_second_writer_process_is_refused_and_writes_nothing(
    backend: str, tmp_path: Path
) -> None:
    location = location_for(backend, tmp_path)
    stored = await store_session(backend, location, "contended")
    owner_report, loser_report = tmp_path / "owner.txt", tmp_path / "loser.txt"
    owner = start_child("own", backend, location, "contended", owner_report)
    try:
        wait_for(owner, owner_report, "ready")
        wait_for(owner, owner_report, "flushed")

        loser = start_child("once", backend, location, "contended", loser_report)
        _, stderr = loser.communicate(timeout=60)
        assert loser.returncode == 0, stderr.decode()
        assert report_lines(loser_report) == [f"conflict pid {owner.pid} on {os.uname()[1]}\n"]

        flushes_so_far = sum(line.startswith("flushed") for line in report_lines(owner_report))
        wait_for(owner, owner_report, "flushed", count=flushes_so_far + 2)  # undisturbed
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.communicate()

    assert LOSER_MARK.encode() not in _stored_bytes(backend, location)
    durable = flushed_events(owner_report)
    async with open_backend(backend, location) as store:  # the dead owner held nothing
        loaded = await store.load("contended")
    as_stored = [event.model_dump(mode="json") for event in loaded.events]
    assert as_stored[: len(stored)] == stored
    assert durable and all(as_stored[event["seq"]] == event for event in durable)


@pytest.mark.parametrize("backend", ["sqlite", "jsonl"])
async def test_a_live_writer_process_refuses_load_and_attach_but_not_read(
    backend: str, tmp_path: Path
) -> None:
    location = location_for(backend, tmp_path)
    await store_session(backend, location, "held")
    report = tmp_path / "owner.txt"
    owner = start_child("own", backend, location, "held", report)
    try:
        wait_for(owner, report, "flushed")
        store = open_backend(backend, location)

        with pytest.raises(SessionConflictError) as raised:
            await store.load("held")
        assert raised.value.session_id == "held"
        assert raised.value.holder == f"pid {owner.pid} on {os.uname()[1]}"
        read, _ = await store.read("held")
        assert read.seq > 0

        flushes_so_far = sum(line.startswith("flushed") for line in report_lines(report))
        wait_for(owner, report, "flushed", count=flushes_so_far + 2)  # the read disturbed nothing
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.communicate()

    assert store.lock_path_of(SessionId("held")).exists()  # left by the killed owner, not locked
    loaded = await store.load("held")  # a killed owner's ownership died with it
    durable = flushed_events(report)
    as_stored = [event.model_dump(mode="json") for event in loaded.events]
    assert all(as_stored[event["seq"]] == event for event in durable)
    await store.close()


async def test_two_store_objects_in_one_process_conflict_until_released(
    durable_store: StoreFactory,
) -> None:
    first, second = durable_store(), durable_store()
    with pytest.raises(StoreError, match="no session 'shared'"):
        await first.load("shared")  # a failed load keeps no claim
    session = Session.create("shared")
    first.attach(session)

    if not isinstance(second, PostgresSessionStore):  # it refuses at the first flush instead
        with pytest.raises(SessionConflictError) as raised:
            second.attach(Session.create("shared"))
        assert raised.value.session_id == "shared"
    complete_turn(session)
    await first.flush(session)
    with pytest.raises(SessionConflictError):
        await second.load("shared")
    assert (await second.read("shared"))[0].events == session.events

    first.detach(session)
    taken = await second.load("shared")
    with pytest.raises(SessionConflictError):
        await first.load("shared")
    complete_turn(taken)
    await second.close()

    again = await first.load("shared")
    assert list(again.events[: taken.seq]) == list(taken.events)
    await first.close()


async def test_closing_a_store_gives_its_sessions_up(durable_store: StoreFactory) -> None:
    store, other = durable_store(), durable_store()
    session = await store_completed_turn(store)
    await store.load(session.id)
    with pytest.raises(SessionConflictError):
        await other.load(session.id)
    await store.close()

    await other.load(session.id)
    await other.close()
    if isinstance(store, PostgresSessionStore):
        assert await _postgres_owner(store.dsn, session.id) is None
        return
    leftovers = [path.name for path in _folder_of(store).iterdir() if path.suffix == ".lock"]
    assert leftovers == []


async def _postgres_owner(dsn: str, session_id: str) -> object:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn) as connection:
        cursor = await connection.execute(
            "SELECT owner_token FROM dsh_sessions WHERE id = %s", (session_id,)
        )
        row = await cursor.fetchone()
    assert row is not None
    return row[0]


def _folder_of(store: object) -> Path:
    if isinstance(store, SqliteSessionStore):
        return store.path.parent
    directory: Path = getattr(store, "directory")  # noqa: B009 - the JSONL store
    return directory


async def test_memory_store_refuses_a_second_object_with_the_same_id() -> None:
    store = MemorySessionStore()
    session = await store_completed_turn(store)
    loaded = await store.load(session.id)

    with pytest.raises(SessionConflictError) as raised:
        store.attach(Session.create(session.id))
    assert raised.value.session_id == session.id
    with pytest.raises(SessionConflictError):
        await store.load(session.id)
    store.detach(loaded)
    await store.load(session.id)


async def _stored_in_layout_one(tmp_path: Path) -> tuple[Path, Session]:
    """A layout-1 database (writer epochs are layout 1's) holding one completed turn,
    its store closed."""
    path = layout_one(tmp_path / "sessions.db")
    setup = SqliteSessionStore(path)
    session = await store_completed_turn(setup)
    await setup.close()
    return path, session


async def test_a_fenced_sqlite_writer_writes_nothing_and_sees_the_conflict_as_itself(
    tmp_path: Path,
) -> None:
    path, session = await _stored_in_layout_one(tmp_path)
    store = SqliteSessionStore(path)
    loaded = await store.load(session.id)
    stored_seq = loaded.seq
    # A writer the lock file cannot see (another host on a shared disk) takes over.
    with sqlite3.connect(path) as intruder:
        intruder.execute(
            "UPDATE dsh_session_writers SET epoch = epoch + 1, claimed_by = 'elsewhere' "
            "WHERE session_id = ?",
            (session.id,),
        )
    complete_turn(loaded)

    for _ in range(2):  # the retry is refused too
        with pytest.raises(SessionConflictError) as raised:
            await store.flush(loaded)
        assert type(raised.value) is SessionConflictError
        assert raised.value.holder == "elsewhere"
    with pytest.raises(SessionConflictError, match="not durable"):
        await store.close()

    with sqlite3.connect(path) as check:
        count = check.execute(
            "SELECT count(*) FROM dsh_events WHERE session_id = ?", (session.id,)
        ).fetchone()[0]
    assert count == stored_seq


async def test_a_fenced_sqlite_writer_whose_rows_the_new_owner_wrote_meets_the_conflict(
    tmp_path: Path,
) -> None:
    """The epoch check rides on the first insert of a batch: a fenced writer whose
    first row's seq the new owner has already written must still meet the takeover
    (not a duplicate-key failure), and leave the new owner's rows as they are."""
    path, session = await _stored_in_layout_one(tmp_path)
    fenced_store = SqliteSessionStore(path)
    fenced = await fenced_store.load(session.id)
    layout = fenced_store._layout
    assert isinstance(layout, DshLayout)
    layout._locks.release(fenced.id)  # as if the new owner reached the file another way
    async with SqliteSessionStore(path) as owner_store:
        owner = await owner_store.load(session.id)
        complete_turn(owner, tool_output="the owner's")
        await owner_store.flush(owner)
        owned_rows = _event_rows(path, session.id)
        complete_turn(fenced, tool_output="the fenced writer's")  # the same seqs
        assert fenced.seq <= owner.seq

        for _ in range(2):  # the retry is refused too
            with pytest.raises(SessionConflictError) as raised:
                await fenced_store.flush(fenced)
            assert type(raised.value) is SessionConflictError
            assert raised.value.holder is not None
        assert _event_rows(path, session.id) == owned_rows
        with pytest.raises(SessionConflictError, match="not durable"):
            await fenced_store.close()


def _event_rows(path: Path, session_id: str) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as db:
        return db.execute(
            "SELECT seq, event FROM dsh_events WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
