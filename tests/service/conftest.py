"""Fixtures: each service test runs on every backend through one store factory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_session.stores import (
    JsonlSessionStore,
    MemorySessionStore,
    PostgresSessionStore,
    SessionStore,
    SqliteSessionStore,
)
from dsh_session.stores._sqlite_layout_one import create_layout_one

StoreFactory = Callable[[], SessionStore]

DURABLE = ("sqlite", "sqlite-layout1", "jsonl", "postgres")
"""``sqlite``: a harness schema-17 file (what a new file is); ``sqlite-layout1``: dsh's
earlier layout; ``jsonl``: a store root in the harness's folder layout."""


def store_url(backend: str, tmp_path: Path, dsn: str | None) -> str:
    """The URL a child process opens the same store with."""
    if backend == "postgres":
        assert dsn is not None
        return dsn
    if backend == "jsonl":
        return f"jsonl:///{tmp_path / 'sessions'}"
    path = tmp_path / "sessions.db"
    if backend == "sqlite-layout1" and not path.exists():
        create_layout_one(path)
    return f"sqlite:///{path}"


@pytest.fixture(params=["memory", *DURABLE])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> StoreFactory:
    """A new store object over this test's storage each call (memory: the same one)."""
    memory = MemorySessionStore()
    if backend == "postgres":
        dsn: str = request.getfixturevalue("postgres_dsn")
        return lambda: PostgresSessionStore(dsn)

    def open_() -> SessionStore:
        if backend == "jsonl":
            return JsonlSessionStore(tmp_path / "sessions")
        if backend == "sqlite-layout1":
            path = tmp_path / "sessions.db"
            if not path.exists():
                create_layout_one(path)
            return SqliteSessionStore(path)
        if backend == "sqlite":
            return SqliteSessionStore(tmp_path / "sessions.db")
        return memory

    return open_
