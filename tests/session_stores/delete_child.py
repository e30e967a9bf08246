"""Child process of the delete tests: a delete that crashes half-way.

Run as ``python -m session_stores.delete_child BACKEND LOCATION SESSION_ID`` from the
``tests`` directory. The process dies (``os._exit``, no cleanup) at the worst point of
its backend's delete: SQLite as its transaction's ``COMMIT`` starts (every row already
deleted inside it), JSONL right after the log was renamed out of the session's name
and before anything was removed.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from pathlib import Path

import dsh_session.stores._removal as removal
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore

CRASH_STATUS = 17


def _die_at_commit(statement: str) -> None:
    if statement.strip().upper() == "COMMIT":
        os._exit(CRASH_STATUS)


def _open(backend: str, location: str) -> SessionStore:
    if backend == "sqlite":
        store = SqliteSessionStore(location)
        db: sqlite3.Connection = store._db
        db.set_trace_callback(_die_at_commit)
        return store
    real_hide = removal._hide

    def hide_then_die(log: Path) -> Path:
        real_hide(log)
        os._exit(CRASH_STATUS)

    removal._hide = hide_then_die
    return JsonlSessionStore(location)


async def main(backend: str, location: str, session_id: str) -> None:
    await _open(backend, location).delete(session_id)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
