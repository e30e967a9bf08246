"""Fixtures: every store test runs against each backend through one small interface."""

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

from .sqlite_files import layout_one

StoreFactory = Callable[[], SessionStore]
DurableStoreClass = type[SqliteSessionStore] | type[JsonlSessionStore]


SQLITE_BACKENDS = ("sqlite", "sqlite-layout1")
"""``sqlite``: what ``SqliteSessionStore`` creates for a new file (the harness's schema
17); ``sqlite-layout1``: a database of dsh's earlier layout 1, made explicitly, which the
same class opens and appends to in its own layout."""


@pytest.fixture(params=["memory", *SQLITE_BACKENDS, "jsonl", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def sqlite_store(backend: str, path: Path) -> SqliteSessionStore:
    """A SQLite store at ``path``; for ``sqlite-layout1`` the file is first made in
    layout 1 when it does not exist yet."""
    if backend == "sqlite-layout1" and not path.exists():
        layout_one(path)
    return SqliteSessionStore(path)


@pytest.fixture
def open_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> StoreFactory:
    """Open a store object on this test's storage. Durable backends give a new object
    over the same files (or PostgreSQL schema) each call; the memory backend can only
    give the same object."""
    memory = MemorySessionStore()
    if backend == "postgres":
        dsn: str = request.getfixturevalue("postgres_dsn")
        return lambda: PostgresSessionStore(dsn)

    def open_() -> SessionStore:
        if backend in SQLITE_BACKENDS:
            return sqlite_store(backend, tmp_path / "sessions.db")
        if backend == "jsonl":
            return JsonlSessionStore(tmp_path / "sessions")
        return memory

    return open_


@pytest.fixture(params=[*SQLITE_BACKENDS, "jsonl", "postgres"])
def durable_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Open a durable store over this test's files or schema (a new object each call)."""
    backend = str(request.param)
    if backend == "postgres":
        dsn: str = request.getfixturevalue("postgres_dsn")
        return lambda: PostgresSessionStore(dsn)
    if backend in SQLITE_BACKENDS:
        return lambda: sqlite_store(backend, tmp_path / "sessions.db")
    return lambda: JsonlSessionStore(tmp_path / "sessions")


@pytest.fixture(params=[SqliteSessionStore, JsonlSessionStore], ids=["sqlite", "jsonl"])
def durable_store_class(request: pytest.FixtureRequest) -> DurableStoreClass:
    """A durable store class; construct it over ``tmp_path / "store"``."""
    store_class: DurableStoreClass = request.param
    return store_class
