"""A failed write raises at the flush, keeps its batch queued ahead of newer events,
and a later flush makes everything durable exactly once: nothing dropped, nothing
half-applied, nothing duplicated."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dsh_session._harness_format import read_log, scan_frames
from dsh_session._session import Session
from dsh_session.errors import StoreError
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore

from .scenarios import complete_turn, loads_back, store_completed_turn
from .sqlite_files import layout_one


async def _assert_durable(store: SessionStore, session: Session) -> None:
    """A new store object loads exactly the events of ``session`` plus end-seed."""
    loaded = await loads_back(store, session)
    assert [event.type for event in loaded.events[session.seq :]] == ["session/end-seed"]


class _FailingOnce:
    """Replace a function so that its next ``count`` calls raise ``EIO``, then run it."""

    def __init__(self, real: Any, count: int = 1, before: Any = None) -> None:
        self.real, self.remaining, self.before = real, count, before

    def __call__(self, *args: Any) -> Any:
        if self.remaining:
            self.remaining -= 1
            if self.before is not None:
                self.before(*args)
            raise OSError(errno.EIO, "simulated I/O error")
        return self.real(*args)


async def test_sqlite_batch_blocked_by_a_lock_is_retried_with_newer_events(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    store = SqliteSessionStore(path, busy_timeout=0.05)
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    await store.flush(session)
    complete_turn(session)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")

    with pytest.raises(StoreError, match="could not write events"):
        await store.flush(session)
    complete_turn(session)
    with pytest.raises(StoreError, match="locked"):
        await store.flush(session)
    blocker.execute("ROLLBACK")
    await store.flush(session)
    await store.close()

    assert store.stats.failed_writes == 2
    assert store.stats.events_written == session.seq
    await _assert_durable(SqliteSessionStore(path), session)


async def test_sqlite_batch_failing_midway_leaves_no_row_behind(tmp_path: Path) -> None:
    path = layout_one(tmp_path / "s.db")
    store = SqliteSessionStore(path)
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    await store.flush(session)
    durable = session.seq
    complete_turn(session)
    saboteur = sqlite3.connect(path, isolation_level=None)
    saboteur.execute(
        "CREATE TRIGGER sabotage BEFORE INSERT ON dsh_events "
        f"WHEN NEW.seq = {durable + 5} BEGIN SELECT RAISE(ABORT, 'disk full'); END"
    )

    with pytest.raises(StoreError, match="disk full"):
        await store.flush(session)
    (stored,) = saboteur.execute("SELECT count(*) FROM dsh_events").fetchone()
    assert stored == durable
    saboteur.execute("DROP TRIGGER sabotage")
    await store.flush(session)
    await store.close()

    await _assert_durable(SqliteSessionStore(path), session)


async def test_jsonl_failed_fsync_is_retried_without_duplicating_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = JsonlSessionStore(tmp_path)
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    await store.flush(session)
    complete_turn(session)
    monkeypatch.setattr(os, "fsync", _FailingOnce(os.fsync))

    with pytest.raises(StoreError, match="simulated I/O error"):
        await store.flush(session)
    complete_turn(session)
    await store.flush(session)

    data = store.path_of(session.id).read_bytes()
    assert len(read_log(data, compressed=True).events) == session.seq
    assert len(scan_frames(data).frames) == 3  # header, first batch, the retried one
    await store.close()
    await _assert_durable(JsonlSessionStore(tmp_path), session)


async def test_jsonl_partial_write_is_cut_before_the_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = JsonlSessionStore(tmp_path)
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    await store.flush(session)
    complete_turn(session)
    real_pwrite = os.pwrite

    def write_half(fd: int, data: bytes, offset: int) -> None:
        real_pwrite(fd, bytes(data[: len(data) // 2]), offset)

    monkeypatch.setattr(os, "pwrite", _FailingOnce(real_pwrite, before=write_half))
    with pytest.raises(StoreError, match="simulated I/O error"):
        await store.flush(session)
    await store.flush(session)

    assert store.stats.failed_writes == 1
    await store.close()
    await _assert_durable(JsonlSessionStore(tmp_path), session)


async def test_jsonl_failed_creation_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = JsonlSessionStore(tmp_path)
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    monkeypatch.setattr(os, "link", _FailingOnce(os.link))

    with pytest.raises(StoreError, match="could not write events 0"):
        await store.flush(session)
    assert not store.path_of(session.id).exists()
    await store.flush(session)
    await store.close()

    folder = Path("_no-cwd", session.id)
    created = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*"))
    assert created == [folder.parent, folder, folder / "session.jsonl.zstd"]  # no staging
    await _assert_durable(JsonlSessionStore(tmp_path), session)


async def test_close_releases_the_store_and_names_what_is_not_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = JsonlSessionStore(tmp_path)
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    monkeypatch.setattr(os, "fsync", _FailingOnce(os.fsync))

    with pytest.raises(StoreError, match=f"not durable.*{session.id}"):
        await store.close()

    with pytest.raises(StoreError, match="closed"):
        await store.load(session.id)
    retry = JsonlSessionStore(tmp_path)
    retry.attach(session)
    await retry.close()
    await _assert_durable(JsonlSessionStore(tmp_path), session)


async def test_a_failed_repair_write_fails_the_load_and_the_next_load_repairs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = JsonlSessionStore(tmp_path)
    session = await store_completed_turn(store)
    monkeypatch.setattr(os, "fsync", _FailingOnce(os.fsync))

    with pytest.raises(StoreError, match="could not write"):
        await store.load(session.id)
    loaded = await store.load(session.id)

    assert [event.type for event in loaded.events[session.seq :]] == ["session/end-seed"]
    await store.close()
    await _assert_durable(JsonlSessionStore(tmp_path), session)


def test_a_file_that_is_not_a_database_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 100)

    with pytest.raises(StoreError, match="not a database"):
        SqliteSessionStore(path)


async def test_an_unreadable_session_file_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "stuck.jsonl").mkdir()

    with pytest.raises(StoreError, match="could not read session 'stuck'"):
        await JsonlSessionStore(tmp_path).load("stuck")
