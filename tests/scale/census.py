"""The memory census of the scale tests, run in a fresh interpreter (``python -m
scale.census CASE FOLDER`` prints its figures as JSON): in a pytest worker, threads and
loops other tests left behind allocate while a census counts, which is noise of dozens
of objects against a check whose slack is 50.

Counted with ``gc.get_objects()`` and tracemalloc, never with the resident set size,
which the allocator does not hand back to the system promptly."""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import tracemalloc
import weakref
from pathlib import Path

from dsh_session import Session
from dsh_session.stores import SqliteSessionStore

from .support import play_turns

SESSIONS = 8
TURNS = 3
ROUNDS = 10


def _census() -> tuple[int, int]:
    """Live objects and traced bytes. Weak references are not counted: a SQLite
    connection keeps one per cursor it made and drops the dead ones only every 200
    cursors, so their number swings by hundreds between two counts without a leak."""
    gc.collect()
    objects = sum(1 for item in gc.get_objects() if type(item) is not weakref.ref)
    return objects, tracemalloc.get_traced_memory()[0]


async def _stored_sessions(store: SqliteSessionStore) -> list[str]:
    ids: list[str] = []
    for _ in range(SESSIONS):
        session = Session.create()
        store.attach(session)
        await play_turns(session, TURNS, store)
        store.detach(session)
        ids.append(session.id)
    return ids


async def _load_serve_close(store: SqliteSessionStore, ids: list[str]) -> list[Session]:
    """Load every session, serve one turn on each by a loop that is then closed: what a
    service does with a session it is asked about. Returns them still attached."""
    loaded = [await store.load(sid) for sid in ids]
    for session in loaded:
        await play_turns(session, 1, store)
    return loaded


def _close(store: SqliteSessionStore, loaded: list[Session]) -> None:
    for session in loaded:
        store.detach(session)
    loaded.clear()


async def closing(folder: Path) -> dict[str, list[int]]:
    """The census before a load of every session, while they are loaded, after they
    are closed (a first round of loads, which adds each end-seed, comes before)."""
    store = SqliteSessionStore(folder / "sessions.db")
    ids = await _stored_sessions(store)
    _close(store, await _load_serve_close(store, ids))
    before = _census()
    loaded = await _load_serve_close(store, ids)
    alive = _census()
    _close(store, loaded)
    after = _census()
    await store.close()
    return {"before": list(before), "alive": list(alive), "after": list(after)}


async def rounds(folder: Path) -> dict[str, list[list[int]]]:
    """The census after each of ``ROUNDS`` rounds of loading, serving and closing."""
    store = SqliteSessionStore(folder / "sessions.db")
    ids = await _stored_sessions(store)
    after: list[list[int]] = []
    for _ in range(ROUNDS):
        _close(store, await _load_serve_close(store, ids))
        after.append(list(_census()))
    await store.close()
    return {"after": after}


if __name__ == "__main__":
    case, folder = sys.argv[1], Path(sys.argv[2])
    tracemalloc.start()
    figures = asyncio.run(closing(folder) if case == "closing" else rounds(folder))
    print(json.dumps(figures))
