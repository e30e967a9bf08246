"""The search index of a schema-17 database, in a file of its own beside it.

The TypeScript harness refuses a database holding any table beyond its schema, so the
index lives in ``<database>.dsh-search`` (mode 0600), attached to the writer's
connection as ``dsh_search``. Each append writes its documents in the append's own
transaction; under write-ahead logging SQLite commits each file of such a transaction
atomically but not the two as a set (the database first), so a crash between the two
commits can leave the index behind the log, never ahead of it. The stamp the index
keeps per session is the row's ``incarnation`` and ``revision``, which the harness
bumps on every append too: a session the harness appended to, or one a crash left
behind, is re-indexed from its log before the next search (``_search_fts5.py``). For
the same reason the index file commits with ``synchronous = NORMAL``: write-ahead
logging keeps it consistent, and the commits a power cut takes from it take their
stamps with them, so those sessions are indexed again; the append pays one durable
sync (the database's), not two.
docs/decisions/2026-12-06-search-index.md weighs this against the alternatives.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from dsh_session._harness_format import StoredSession, read_stored_session
from dsh_session.errors import SessionNotFoundError
from dsh_session.events import LogEvent
from dsh_session.stores._search_fts5 import Fts5Index

SCHEMA = "dsh_search"
"""The name the index file is attached under."""

EventsOf = Callable[[StoredSession], Sequence[LogEvent]]
"""How the layout turns a stored session into dsh events (refusing a damaged one)."""


def index_path(database: Path) -> Path:
    """The index file of a database."""
    return database.with_name(f"{database.name}.dsh-search")


_STAMP = "SELECT incarnation, revision FROM main.sessions WHERE id = ?"


class _HarnessLogs:
    """Schema 17's logs as the index sees them; the stamp is incarnation and revision."""

    def __init__(self, events_of: EventsOf) -> None:
        self._events_of = events_of

    def stamps(self, db: sqlite3.Connection) -> dict[str, str]:
        rows = db.execute("SELECT id, incarnation, revision FROM main.sessions")
        return {sid: f"{incarnation}:{revision}" for sid, incarnation, revision in rows}

    def stamp(self, db: sqlite3.Connection, session_id: str) -> str | None:
        found = db.execute(_STAMP, (session_id,)).fetchone()
        return None if found is None else f"{found[0]}:{found[1]}"

    def read(self, db: sqlite3.Connection, session_id: str) -> tuple[Sequence[LogEvent], str]:
        stored = read_stored_session(db, session_id)
        if stored is None:
            raise SessionNotFoundError(session_id, str(db))
        return self._events_of(stored), stamp_of(db, session_id)

    def read_after(
        self, db: sqlite3.Connection, session_id: str, stamp: str | None, limit: int
    ) -> None:
        """A revision names no point in the events to read on from: read whole."""
        return None


def stamp_of(db: sqlite3.Connection, session_id: str) -> str:
    """A stored session's stamp as the open transaction sees it."""
    incarnation, revision = db.execute(_STAMP, (session_id,)).fetchone()
    return f"{incarnation}:{revision}"


def harness_index(events_of: EventsOf) -> Fts5Index:
    """The index of a schema-17 database, once attached under :data:`SCHEMA`."""
    return Fts5Index(_HarnessLogs(events_of), schema=SCHEMA)


def attach_index(
    db: sqlite3.Connection, index: Fts5Index, database: Path, *, writable: bool
) -> bool:
    """Attach the database's index file to ``db``: a writable connection creates it
    (mode 0600, write-ahead logging, the tables); a read-only one attaches it read-only
    when it exists. Whether it is attached."""
    path = index_path(database)
    if writable:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    elif not path.exists():
        return False
    immutable = "" if writable or Path(f"{path}-wal").exists() else "&immutable=1"
    uri = f"{path.absolute().as_uri()}?mode={'rw' if writable else 'ro'}{immutable}"
    db.execute(f"ATTACH DATABASE ? AS {SCHEMA}", (uri,))
    if writable:
        db.execute(f"PRAGMA {SCHEMA}.journal_mode = WAL")
        db.execute(f"PRAGMA {SCHEMA}.synchronous = NORMAL")  # see the module docstring
        db.execute("BEGIN IMMEDIATE")
        try:
            index.create(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return True


__all__ = [
    "SCHEMA",
    "attach_index",
    "harness_index",
    "index_path",
    "stamp_of",
]
