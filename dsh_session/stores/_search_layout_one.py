"""The search index of dsh's own SQLite layout 1: in the same file, written in each
append's own transaction, so it can never disagree with the log after a crash. A file
written before search gets the index tables when a writable store opens it, and its
logs are indexed by the first search (``_search_fts5.py``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from dsh_session._parse import parse_events
from dsh_session.events import LogEvent
from dsh_session.stores._base import Batch
from dsh_session.stores._search_fts5 import Fts5Index


class _LayoutOneLogs:
    """Layout 1's logs as the index sees them; the stamp is the next seq."""

    def stamps(self, db: sqlite3.Connection) -> dict[str, str]:
        rows = db.execute(
            "SELECT s.id, (SELECT max(e.seq) + 1 FROM dsh_events e WHERE e.session_id = s.id) "
            "FROM dsh_sessions s"
        )
        return {sid: str(head or 0) for sid, head in rows}

    def read(self, db: sqlite3.Connection, session_id: str) -> tuple[Sequence[LogEvent], str]:
        rows = db.execute(
            "SELECT event FROM dsh_events WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
        events = parse_events([event for (event,) in rows])
        return events, str(events[-1].seq + 1 if events else 0)


def layout_one_index() -> Fts5Index:
    """The index of a layout-1 database."""
    return Fts5Index(_LayoutOneLogs())


def create_index(index: Fts5Index, db: sqlite3.Connection) -> None:
    """Give a writable database the index tables, in one transaction."""
    db.execute("BEGIN IMMEDIATE")
    try:
        index.create(db)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def index_batch(index: Fts5Index, db: sqlite3.Connection, batch: Batch) -> None:
    """Index a batch inside the transaction that writes it."""
    if batch.events:
        index.add(db, batch.session_id, batch.events, str(batch.events[-1].seq + 1))
    elif batch.header is not None:
        index.add(db, batch.session_id, (), "0")


__all__ = [
    "create_index",
    "index_batch",
    "layout_one_index",
]
