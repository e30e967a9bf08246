"""A long session of the 1M-event shape (streamed tool turns, thousands of them; smaller
here) loads from each store form exactly as it was written and takes new turns as a
new session does (issue 33: a 1,000,000-event session in the harness's zstd JSONL,
SQLite schema 17 and PostgreSQL)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from dsh_session import Session
from dsh_session.stores import (
    JsonlSessionStore,
    PostgresSessionStore,
    SessionStore,
    SqliteSessionStore,
)

from .support import play_turns

TURNS = 400
"""About 7,600 events: thousands of packed chunk rows and many zstd frames."""

StoreOpener = Callable[[], SessionStore]


@pytest.fixture(scope="module")
def long_session() -> Session:
    session = Session.create()
    asyncio.run(play_turns(session, TURNS))
    return session


@pytest.fixture(params=["zstd JSONL", "SQLite schema 17", "PostgreSQL"])
async def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreOpener]:
    opened: list[SessionStore] = []

    def opener() -> SessionStore:
        if request.param == "zstd JSONL":
            store: SessionStore = JsonlSessionStore(tmp_path / "jsonl")
        elif request.param == "SQLite schema 17":
            store = SqliteSessionStore(tmp_path / "sessions.db")
        else:
            store = PostgresSessionStore(request.getfixturevalue("postgres_dsn"))
        opened.append(store)
        return store

    yield opener
    for store in opened:
        await store.close()


def _wire(session: Session, count: int | None = None) -> list[str]:
    return [event.model_dump_json() for event in session.events[:count]]


async def test_a_long_session_loads_as_written_and_takes_turns(
    long_session: Session, open_store: StoreOpener
) -> None:
    session = Session.from_log(long_session.header, long_session.events)
    writer = open_store()
    writer.attach(session)
    await writer.flush(session)
    writer.detach(session)
    written = session.seq
    assert written > 7_000

    store = open_store()
    loaded = await store.load(session.id)
    assert _wire(loaded, written) == _wire(session)
    assert [event.type for event in loaded.events[written:]] == ["session/end-seed"]
    assert [m.id for m in loaded.derive_messages()] == [m.id for m in session.derive_messages()]

    await play_turns(loaded, 2, store)  # appended and flushed as by any served turn
    store.detach(loaded)
    assert loaded.last_turn == TURNS + 2

    again = await open_store().load(session.id)
    assert _wire(again, loaded.seq) == _wire(loaded)
    assert [event.type for event in again.events[loaded.seq :]] == ["session/end-seed"]
    ids = [m.id for m in again.derive_messages()]
    assert len(ids) == len(set(ids)) == (TURNS + 2) * 4
