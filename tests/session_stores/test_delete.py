"""``store.delete(session_id)``: the whole session goes, or (refused, crashed) none of
it; a writer that owns the session is never pulled from under it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dsh_session._session import Session
from dsh_session.errors import (
    SessionConflictError,
    SessionNotFoundError,
    SessionValidationError,
    StoreError,
)
from dsh_session.stores import JsonlSessionStore, SqliteSessionStore, open_store
from dsh_session.stores._sqlite_layout_one import DshLayout

from .conftest import StoreFactory
from .delete_child import CRASH_STATUS
from .scenarios import complete_turn, loads_back, store_completed_turn
from .sqlite_files import layout_one
from .writer_processes import (
    TESTS_DIR,
    Event,
    location_for,
    open_backend,
    start_child,
    store_session,
    wait_for,
)


async def test_delete_removes_one_session_and_keeps_the_others(open_store: StoreFactory) -> None:
    store = open_store()
    kept = await store_completed_turn(store)
    doomed = await store_completed_turn(store)

    await store.delete(doomed.id)

    assert [header.id for header in await store.list_sessions()] == [kept.id]
    with pytest.raises(SessionNotFoundError, match=doomed.id):
        await store.read(doomed.id)
    again = open_store()  # a new object over the same files sees the same
    if again is not store:
        await store.close()
    with pytest.raises(SessionNotFoundError):
        await again.load(doomed.id)
    await loads_back(again, kept)
    await again.close()


async def test_unknown_and_malformed_ids_are_refused(open_store: StoreFactory) -> None:
    store = open_store()
    kept = await store_completed_turn(store)
    with pytest.raises(SessionNotFoundError, match="no session 'not-stored'"):
        await store.delete("not-stored")
    with pytest.raises(SessionValidationError):
        await store.delete("../escape")
    await loads_back(store, kept)
    await store.close()


async def test_an_attached_session_is_not_deleted(open_store: StoreFactory) -> None:
    store = open_store()
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    await store.flush(session)

    with pytest.raises(SessionConflictError, match="attached to this store"):
        await store.delete(session.id)

    complete_turn(session)
    await store.flush(session)  # the owner goes on writing
    store.detach(session)
    await loads_back(store, session)
    await store.close()


async def test_a_fork_outlives_its_deleted_parent(open_store: StoreFactory) -> None:
    store = open_store()
    parent = await store_completed_turn(store)
    child = parent.fork()
    store.attach(child)
    await store.flush(child)
    store.detach(child)

    await store.delete(parent.id)

    loaded = await loads_back(store, child)
    assert loaded.header.parent_session == parent.id
    assert [event.type for event in loaded.events] == [event.type for event in child.events]
    await store.close()


async def test_another_store_object_owning_the_session_refuses_the_delete(
    durable_store: StoreFactory,
) -> None:
    owner, other = durable_store(), durable_store()
    session = await store_completed_turn(owner)
    loaded = await owner.load(session.id)

    with pytest.raises(SessionConflictError, match="another writer"):
        await other.delete(session.id)

    await owner.close()
    await other.delete(loaded.id)  # let go: now it can go
    assert await other.list_sessions() == []
    await other.close()


async def test_a_read_only_store_refuses_to_delete(tmp_path: Path) -> None:
    async with SqliteSessionStore(tmp_path / "s.db") as store:
        session = await store_completed_turn(store)
    async with open_store(f"sqlite:///{tmp_path / 's.db'}", mode="read") as reader:
        with pytest.raises(StoreError, match="read-only"):
            await reader.delete(session.id)
        assert [header.id for header in await reader.list_sessions()] == [session.id]


@pytest.mark.parametrize("backend", ["sqlite", "jsonl"])
async def test_a_process_holding_the_session_refuses_the_delete(
    backend: str, tmp_path: Path
) -> None:
    location = location_for(backend, tmp_path)
    await store_session(backend, location, "held")
    report = tmp_path / "report"
    child = start_child("own", backend, location, "held", report)
    try:
        wait_for(child, report, "ready")
        async with open_backend(backend, location) as store:
            with pytest.raises(SessionConflictError, match=f"pid {child.pid}") as refused:
                await store.delete("held")
            assert refused.value.holder is not None
            assert [header.id for header in await store.list_sessions()] == ["held"]
    finally:
        child.kill()
        child.wait()
    async with open_backend(backend, location) as store:
        await store.delete("held")  # the kernel dropped the dead writer's lock
        assert await store.list_sessions() == []


async def test_a_sqlite_writer_the_lock_cannot_see_is_fenced_off_by_the_delete(
    tmp_path: Path,
) -> None:
    writer = SqliteSessionStore(layout_one(tmp_path / "s.db"))  # writer epochs: layout 1
    session = await store_completed_turn(writer)
    loaded = await writer.load(session.id)
    layout = writer._layout
    assert isinstance(layout, DshLayout)
    layout._locks.release(loaded.id)  # as if it reached the file through another path

    async with SqliteSessionStore(tmp_path / "s.db") as deleter:
        await deleter.delete(loaded.id)

    complete_turn(loaded)
    with pytest.raises(SessionConflictError, match="taken over"):
        await writer.flush(loaded)
    with pytest.raises(SessionConflictError):
        await writer.close()
    async with SqliteSessionStore(tmp_path / "s.db") as store:
        assert await store.list_sessions() == []


def _delete_crashing(backend: str, location: Path, at_commit: int = 1) -> int:
    """Run a delete of ``doomed`` that dies part-way; its exit status."""
    argv = [sys.executable, "-m", "session_stores.delete_child", backend, str(location)]
    child = subprocess.run(
        [*argv, "doomed", str(at_commit)], cwd=TESTS_DIR, capture_output=True, timeout=60
    )
    assert child.returncode in (0, CRASH_STATUS), child.stderr.decode()
    return child.returncode


async def _whole_or_gone(backend: str, location: Path, events: list[Event]) -> bool:
    """Check that ``doomed`` is stored whole or not at all (and ``other`` untouched);
    return whether it is gone."""
    async with open_backend(backend, location) as store:
        await store.read("other")
        listed = [header.id for header in await store.list_sessions()]
        if "doomed" not in listed:
            assert listed == ["other"]
            with pytest.raises(SessionNotFoundError):
                await store.load("doomed")
            return True
        session, report = await store.read("doomed")
        assert [e.model_dump(mode="json") for e in session.events] == events
        assert not report.repaired
        return False


@pytest.mark.parametrize("backend", ["sqlite", "sqlite-layout1"])
async def test_a_sqlite_delete_crashing_at_any_commit_leaves_all_or_nothing(
    backend: str, tmp_path: Path
) -> None:
    location = location_for(backend, tmp_path)
    await store_session(backend, location, "other")
    events = await store_session(backend, location, "doomed")

    # Die at the delete's first COMMIT, then its second, ...: after each crash the
    # session is whole or gone, and one more commit than the delete makes lets it finish.
    for at_commit in range(1, 5):
        crashed = _delete_crashing(backend, location, at_commit) == CRASH_STATUS
        gone = await _whole_or_gone(backend, location, events)
        if not crashed:
            assert gone
            break
        assert not gone  # the crash came before the one commit that deletes it all
    assert at_commit == 2  # one transaction


async def test_a_jsonl_delete_crashing_after_the_rename_leaves_no_session(
    tmp_path: Path,
) -> None:
    location = location_for("jsonl", tmp_path)
    await store_session("jsonl", location, "other")
    events = await store_session("jsonl", location, "doomed")

    assert _delete_crashing("jsonl", location) == CRASH_STATUS

    assert await _whole_or_gone("jsonl", location, events)  # the rename was the point
    assert [path.name for path in location.glob("doomed*")] == []


async def test_a_jsonl_delete_takes_the_torn_tail_sidecars_too(tmp_path: Path) -> None:
    async with JsonlSessionStore(tmp_path, compression="none") as store:
        session = await store_completed_turn(store)
        log = store.path_of(session.id)
    with log.open("ab") as file:
        file.write(b'{"seq": 99, "ty')  # a torn last line
    async with JsonlSessionStore(tmp_path) as store:
        loaded = await store.load(session.id)
        assert store.load_report(loaded).torn_tail is not None
    assert len(list(log.parent.glob(f"{log.name}.torn-*"))) == 1

    async with JsonlSessionStore(tmp_path) as store:
        await store.delete(session.id)
    assert sorted(path.name for path in tmp_path.iterdir()) == []
