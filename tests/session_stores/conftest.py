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

StoreFactory = Callable[[], SessionStore]
DurableStoreClass = type[SqliteSessionStore] | type[JsonlSessionStore]


@pytest.fixture(params=["memory", "sqlite", "jsonl", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


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
        if backend == "sqlite":
            return SqliteSessionStore(tmp_path / "sessions.db")
        if backend == "jsonl":
            return JsonlSessionStore(tmp_path / "sessions")
        return memory

    return open_


@pytest.fixture(params=["sqlite", "jsonl", "postgres"])
def durable_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Open a durable store over this test's files or schema (a new object each call)."""
    if request.param == "postgres":
        dsn: str = request.getfixturevalue("postgres_dsn")
        return lambda: PostgresSessionStore(dsn)
    if request.param == "sqlite":
        return lambda: SqliteSessionStore(tmp_path / "sessions.db")
    return lambda: JsonlSessionStore(tmp_path / "sessions")


@pytest.fixture(params=[SqliteSessionStore, JsonlSessionStore], ids=["sqlite", "jsonl"])
def durable_store_class(request: pytest.FixtureRequest) -> DurableStoreClass:
    """A durable store class; construct it over ``tmp_path / "store"``."""
    store_class: DurableStoreClass = request.param
    return store_class
