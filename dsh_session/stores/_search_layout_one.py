"""The search index of dsh's own SQLite layout 1, in the same file. Appends do not
write it: each search first catches every session up from the seq its index stopped
at, in transactions of its own (``_search_fts5.py``), so a durable flush writes the
log's pages alone, and an event is indexed exactly once whether or not its writer
crashed after the commit (docs/decisions/2026-12-06-search-index-after-commit.md). A
file written before search gets the index tables when a writable store opens it."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from dsh_session._parse import parse_events
from dsh_session.events import LogEvent
from dsh_session.stores._search_fts5 import Fts5Index


class _LayoutOneLogs:
    """Layout 1's logs as the index sees them; the stamp is the next seq, so the index
    reads on from the seq its stamp names (a layout-1 log only grows, and deleting a
    session drops its index in the same transaction)."""

    def stamps(self, db: sqlite3.Connection) -> dict[str, str]:
        rows = db.execute(
            "SELECT s.id, (SELECT max(e.seq) + 1 FROM dsh_events e WHERE e.session_id = s.id) "
            "FROM dsh_sessions s"
        )
        return {sid: str(head or 0) for sid, head in rows}

    def stamp(self, db: sqlite3.Connection, session_id: str) -> str | None:
        found = db.execute(
            "SELECT (SELECT max(e.seq) + 1 FROM dsh_events e WHERE e.session_id = s.id) "
            "FROM dsh_sessions s WHERE s.id = ?",
            (session_id,),
        ).fetchone()
        return None if found is None else str(found[0] or 0)

    def read(self, db: sqlite3.Connection, session_id: str) -> tuple[Sequence[LogEvent], str]:
        rows = db.execute(
            "SELECT event FROM dsh_events WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
        events = parse_events([event for (event,) in rows])
        return events, str(events[-1].seq + 1 if events else 0)

    def read_after(
        self, db: sqlite3.Connection, session_id: str, stamp: str | None, limit: int
    ) -> tuple[Sequence[LogEvent], str] | None:
        if stamp is not None and not stamp.isdigit():
            return None  # not a stamp of this layout's: read the log whole
        start = 0 if stamp is None else int(stamp)
        rows = db.execute(
            "SELECT event FROM dsh_events WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT ?",
            (session_id, start, limit),
        ).fetchall()
        events = parse_events([event for (event,) in rows])
        return events, str(events[-1].seq + 1 if events else start)


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


__all__ = [
    "create_index",
    "layout_one_index",
]
