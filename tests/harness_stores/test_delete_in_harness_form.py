"""Deleting sessions the TypeScript harness wrote: a store root's session folders
(plain and zstd) and rows of its schema-17 database. The harness itself never deletes,
so what must hold is that the rest stays exactly as the harness reads it."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from session_stores.delete_child import CRASH_STATUS
from session_stores.sqlite_files import layout_of
from session_stores.writer_processes import TESTS_DIR

from dsh_session._harness_format import check_schema, read_database
from dsh_session.errors import SessionConflictError, SessionNotFoundError
from dsh_session.stores import JsonlSessionStore, SqliteSessionStore, open_store

from .roots import JSONL_FORMS, SCENARIOS, TS_LOGS, copy_root, tree

DOOMED = "two-tools"
OTHERS = sorted(set(SCENARIOS) - {DOOMED})


@pytest.mark.parametrize("form", JSONL_FORMS)
async def test_deleting_from_a_store_root_removes_the_folder_only(
    form: str, tmp_path: Path
) -> None:
    root = copy_root(form, tmp_path)
    others_before = {k: v for k, v in tree(root).items() if f"/{DOOMED}/" not in f"/{k}"}

    async with JsonlSessionStore(root, mode="open") as store:
        await store.delete(DOOMED)
        assert sorted(header.id for header in await store.list_sessions()) == OTHERS
        with pytest.raises(SessionNotFoundError):
            await store.read(DOOMED)

    assert not (root / "_no-cwd" / DOOMED).exists()
    assert tree(root) == others_before


async def test_deleting_the_last_session_of_a_project_removes_the_project_folder(
    tmp_path: Path,
) -> None:
    root = copy_root("jsonl-zstd", tmp_path)
    async with JsonlSessionStore(root, mode="open") as store:
        for session_id in SCENARIOS:
            await store.delete(session_id)
        assert await store.list_sessions() == []
    assert sorted(path.name for path in root.iterdir()) == []


async def test_a_crash_after_the_rename_leaves_no_session_in_the_root(tmp_path: Path) -> None:
    root = copy_root("jsonl-zstd", tmp_path)
    crashed = subprocess.run(
        [sys.executable, "-m", "session_stores.delete_child", "jsonl", str(root), DOOMED],
        cwd=TESTS_DIR,
        capture_output=True,
        timeout=60,
    )
    assert crashed.returncode == CRASH_STATUS, crashed.stderr.decode()
    async with JsonlSessionStore(root, mode="open") as store:
        assert sorted(header.id for header in await store.list_sessions()) == OTHERS
        with pytest.raises(SessionNotFoundError):
            await store.load(DOOMED)
        for session_id in OTHERS:
            await store.read(session_id)


@pytest.fixture
def database(tmp_path: Path) -> Path:
    shutil.copy(TS_LOGS / "sqlite" / "ts.db", tmp_path / "ts.db")
    return tmp_path / "ts.db"


async def test_deleting_from_a_harness_database_keeps_its_schema_and_other_rows(
    database: Path,
) -> None:
    before = {s.header["id"]: s.events for s in read_database(database)}

    async with open_store(f"sqlite:///{database}", mode="open") as store:
        assert isinstance(store, SqliteSessionStore)
        assert layout_of(database) == "schema 17"
        await store.delete(DOOMED)
        assert sorted(header.id for header in await store.list_sessions()) == OTHERS
        with pytest.raises(SessionNotFoundError):
            await store.delete(DOOMED)

    after = {s.header["id"]: s.events for s in read_database(database)}
    assert after == {k: v for k, v in before.items() if k != DOOMED}
    connection = sqlite3.connect(database)
    try:
        check_schema(connection, where=str(database))
        orphans = connection.execute(
            "SELECT count(*) FROM events WHERE session_id = ?", (DOOMED,)
        ).fetchone()
        assert orphans == (0,)
    finally:
        connection.close()


async def test_a_harness_database_session_owned_by_a_writer_is_not_deleted(
    database: Path,
) -> None:
    async with SqliteSessionStore(database, mode="open") as owner:
        await owner.load(DOOMED)
        async with SqliteSessionStore(database, mode="open") as other:
            with pytest.raises(SessionConflictError, match="another writer"):
                await other.delete(DOOMED)
    assert DOOMED in {s.header["id"] for s in read_database(database)}
