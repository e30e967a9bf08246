"""Fixtures: each attachment store test runs against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from providers.http_stub import StubServer
from session_stores.sqlite_files import layout_one

from dsh_session.stores import (
    JsonlSessionStore,
    MemorySessionStore,
    PostgresSessionStore,
    SessionStore,
    SqliteSessionStore,
)

StoreFactory = Callable[[], SessionStore]


@pytest.fixture(params=["memory", "sqlite", "sqlite-layout1", "jsonl", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> StoreFactory:
    """A new store object over this test's storage on each call (memory: a new object
    over the first one's sessions and attachments, standing in for durable storage)."""
    memory = MemorySessionStore()
    if backend == "postgres":
        dsn: str = request.getfixturevalue("postgres_dsn")
        return lambda: PostgresSessionStore(dsn)

    def open_() -> SessionStore:
        if backend.startswith("sqlite"):
            path = tmp_path / "sessions.db"
            if backend == "sqlite-layout1" and not path.exists():
                layout_one(path)
            return SqliteSessionStore(path)
        if backend == "jsonl":
            return JsonlSessionStore(tmp_path / "sessions")
        again = MemorySessionStore()
        again._logs, again._blobs = memory._logs, memory._blobs
        return again

    return open_


@pytest.fixture
async def stub() -> AsyncIterator[StubServer]:
    """A scripted HTTP server on 127.0.0.1 speaking a provider's streaming protocol."""
    server = StubServer()
    await server.start()
    yield server
    await server.close()
