"""Child process of the delete tests: a delete that crashes half-way.

Run as ``python -m session_stores.delete_child BACKEND LOCATION SESSION_ID [N]`` from
the ``tests`` directory. The process dies (``os._exit``, no cleanup) inside its
backend's delete: SQLite as the delete's N-th ``COMMIT`` statement starts (default the
first; a delete that commits fewer times simply finishes and exits 0), JSONL right
after the log was renamed out of the session's name and before anything was removed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import dsh_session.stores._removal as removal
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore
from dsh_session.stores._harness_sqlite import HarnessLayout
from dsh_session.stores._sqlite_layout_one import DshLayout

CRASH_STATUS = 17


def _crash_at_commit(store: SqliteSessionStore, number: int) -> None:
    commits = 0

    def trace(statement: str) -> None:
        nonlocal commits
        if statement.strip().upper() == "COMMIT":
            commits += 1
            if commits == number:
                os._exit(CRASH_STATUS)

    layout = store._layout  # the connection of the layout the file holds
    assert isinstance(layout, DshLayout | HarnessLayout) and layout._db is not None
    layout._db.set_trace_callback(trace)


def _crash_after_rename() -> None:
    real_hide = removal._hide

    def hide_then_die(log: Path) -> Path:
        real_hide(log)
        os._exit(CRASH_STATUS)

    removal._hide = hide_then_die


async def main(backend: str, location: str, session_id: str, number: int) -> None:
    store: SessionStore
    if backend.startswith("sqlite"):  # sqlite or sqlite-layout1: the file exists
        store = SqliteSessionStore(location)
        _crash_at_commit(store, number)  # after opening: only the delete's commits count
    else:
        store = JsonlSessionStore(location)
        _crash_after_rename()
    await store.delete(session_id)


if __name__ == "__main__":
    backend, location, session_id = sys.argv[1:4]
    asyncio.run(main(backend, location, session_id, int(sys.argv[4]) if len(sys.argv) > 4 else 1))
