"""The SQLite search index: FTS5 over the documents of every stored log.

Three tables, all ``IF NOT EXISTS`` so a database written before search gains them
when a writable store opens it: ``dsh_search_docs`` (one row per surface event: session,
seq, message id, role, the message's text), ``dsh_search_fts`` (a contentless FTS5
index of the text's tokens, sharing the documents' rowids) and ``dsh_search_state``
(per session, the *stamp* of the log the index matches).

Appends write their documents in the append's own transaction (:meth:`add`). Before
each search the stamps are compared with the logs' (:meth:`reconcile`): a session
written by something that does not know the index (the TypeScript harness, an earlier
dsh) or, for an index in a separate file, left behind by a crash between the two files'
commits, is re-indexed from its log; a session gone from the log leaves the index. So
the index never answers with anything the log does not hold, and :meth:`rebuild` makes
it again from the logs alone.

The layout supplies what the index cannot know, as a :class:`IndexedLog`: how to read
every session's stamp and one session's events, both inside the caller's transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol

from dsh_session._search import SearchDocument, SearchHit, SearchQuery, documents_of
from dsh_session._search.scan import hit_of
from dsh_session._search.text import terms_of
from dsh_session.errors import SearchQueryError, SessionNotFoundError
from dsh_session.events import LogEvent

_TABLES = (
    """CREATE TABLE IF NOT EXISTS {s}.dsh_search_docs (
        rowid INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        message_id TEXT NOT NULL,
        role TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (session_id, seq)
    )""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS {s}.dsh_search_fts USING fts5(
        terms, content='', tokenize='unicode61 remove_diacritics 0'
    )""",
    """CREATE TABLE IF NOT EXISTS {s}.dsh_search_state (
        session_id TEXT PRIMARY KEY,
        stamp TEXT NOT NULL
    ) WITHOUT ROWID""",
)
"""The documents, a contentless FTS5 index of their tokens (rowid = the document's; the
tokens are not stored twice: a removal recomputes them from the body), and the stamps."""


class IndexedLog(Protocol):
    """What a layout tells the index about its logs; both run inside a transaction the
    index holds, so the stamp and the events are of one snapshot."""

    def stamps(self, db: sqlite3.Connection) -> dict[str, str]:
        """Every stored session's stamp: a text that changes whenever its log does."""
        ...

    def read(self, db: sqlite3.Connection, session_id: str) -> tuple[Sequence[LogEvent], str]:
        """One session's events and its stamp."""
        ...


class Fts5Index:
    """The index in schema ``schema`` of a connection (``main``, or the name a separate
    index file is attached under), over the logs ``log`` describes."""

    def __init__(self, log: IndexedLog, *, schema: str = "main") -> None:
        self._log = log
        self._s = schema

    # --- inside the caller's transaction ----------------------------------------------

    def create(self, db: sqlite3.Connection) -> None:
        """Add the tables if missing (run it in a transaction: all three or none)."""
        for statement in _TABLES:
            db.execute(statement.format(s=self._s))

    def exists(self, db: sqlite3.Connection) -> bool:
        found = db.execute(
            f"SELECT count(*) FROM {self._s}.sqlite_master WHERE name = 'dsh_search_state'"
        ).fetchone()
        return bool(found[0])

    def add(
        self, db: sqlite3.Connection, session_id: str, events: Sequence[LogEvent], stamp: str
    ) -> None:
        """Index appended events and record the log's new stamp."""
        documents = documents_of(session_id, events)
        if documents:
            found = db.execute(f"SELECT max(rowid) FROM {self._s}.dsh_search_docs").fetchone()
            first = (found[0] or 0) + 1
            db.executemany(
                f"INSERT INTO {self._s}.dsh_search_docs "
                "(rowid, session_id, seq, message_id, role, body) VALUES (?, ?, ?, ?, ?, ?)",
                [(first + n, *_row(document)) for n, document in enumerate(documents)],
            )
            db.executemany(
                f"INSERT INTO {self._s}.dsh_search_fts (rowid, terms) VALUES (?, ?)",
                [(first + n, document.terms) for n, document in enumerate(documents)],
            )
        db.execute(
            f"INSERT OR REPLACE INTO {self._s}.dsh_search_state (session_id, stamp) VALUES (?, ?)",
            (session_id, stamp),
        )

    def forget(self, db: sqlite3.Connection, session_id: str) -> None:
        """Drop a session from the index."""
        rows = db.execute(
            f"SELECT rowid, body FROM {self._s}.dsh_search_docs WHERE session_id = ?",
            (session_id,),
        ).fetchall()
        db.executemany(
            f"INSERT INTO {self._s}.dsh_search_fts (dsh_search_fts, rowid, terms) "
            "VALUES ('delete', ?, ?)",
            [(rowid, terms_of(body)) for rowid, body in rows],
        )
        db.execute(f"DELETE FROM {self._s}.dsh_search_docs WHERE session_id = ?", (session_id,))
        db.execute(f"DELETE FROM {self._s}.dsh_search_state WHERE session_id = ?", (session_id,))

    def holds(self, db: sqlite3.Connection, session_id: str) -> bool:
        """Whether the index knows the session (every stored one, once reconciled)."""
        return (
            db.execute(
                f"SELECT 1 FROM {self._s}.dsh_search_state WHERE session_id = ?", (session_id,)
            ).fetchone()
            is not None
        )

    def stale(self, db: sqlite3.Connection) -> tuple[list[str], list[str]]:
        """Sessions whose log changed since they were indexed (or were never indexed),
        and sessions the index holds that no log does."""
        logged = self._log.stamps(db)
        indexed = dict(db.execute(f"SELECT session_id, stamp FROM {self._s}.dsh_search_state"))
        behind = sorted(sid for sid, stamp in logged.items() if indexed.get(sid) != stamp)
        gone = sorted(set(indexed) - set(logged))
        return behind, gone

    # --- whole operations (each its own write transaction) ---------------------------

    def reconcile(self, db: sqlite3.Connection) -> int:
        """Bring the index up to the logs; the number of sessions re-indexed or dropped.
        A look in a read transaction first: most searches find nothing to do and take
        no write lock."""
        db.execute("BEGIN")
        try:
            behind, gone = self.stale(db)
        finally:
            db.execute("COMMIT")
        if not behind and not gone:
            return 0
        with _write_transaction(db):
            behind, gone = self.stale(db)
            for session_id in gone:
                self.forget(db, session_id)
            for session_id in behind:
                self._index_whole(db, session_id)
        return len(behind) + len(gone)

    def rebuild(self, db: sqlite3.Connection) -> int:
        """Drop everything and index every log again; the number of documents."""
        with _write_transaction(db):
            db.execute(f"DELETE FROM {self._s}.dsh_search_docs")
            db.execute(f"DELETE FROM {self._s}.dsh_search_state")
            db.execute(
                f"INSERT INTO {self._s}.dsh_search_fts (dsh_search_fts) VALUES ('delete-all')"
            )
            for session_id in sorted(self._log.stamps(db)):
                self._index_whole(db, session_id)
            found = db.execute(f"SELECT count(*) FROM {self._s}.dsh_search_docs").fetchone()
        return int(found[0])

    def _index_whole(self, db: sqlite3.Connection, session_id: str) -> None:
        self.forget(db, session_id)
        events, stamp = self._log.read(db, session_id)
        self.add(db, session_id, events, stamp)

    # --- reading ----------------------------------------------------------------------

    def search(
        self,
        db: sqlite3.Connection,
        query: SearchQuery,
        session_id: str | None,
        role: str | None,
        limit: int,
    ) -> list[SearchHit]:
        """The best matches by FTS5's BM25 rank, ties by session and seq."""
        where = ""
        params: list[object] = [query.fts5()]
        if session_id is not None:
            where += " AND d.session_id = ?"
            params.append(session_id)
        if role is not None:
            where += " AND d.role = ?"
            params.append(role)
        params.append(limit)
        s = self._s
        sql = (
            "SELECT d.session_id, d.seq, d.message_id, d.role, d.body "
            f"FROM {s}.dsh_search_fts JOIN {s}.dsh_search_docs AS d "
            f"ON d.rowid = dsh_search_fts.rowid "
            f"WHERE dsh_search_fts MATCH ?{where} "
            "ORDER BY dsh_search_fts.rank, d.session_id, d.seq LIMIT ?"
        )
        try:
            rows = db.execute(sql, params).fetchall()
        except sqlite3.OperationalError as error:
            if "fts5" in str(error):
                raise SearchQueryError(query.text, f"FTS5 refused it ({error})") from error
            raise
        return [hit_of(query, SearchDocument(*row)) for row in rows]


def _row(document: SearchDocument) -> tuple[object, ...]:
    return (
        document.session_id,
        document.seq,
        document.message_id,
        document.role,
        document.body,
    )


@contextmanager
def _write_transaction(db: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any failure."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def indexed_search(
    index: Fts5Index,
    db: sqlite3.Connection,
    *,
    writable: bool,
    where: str,
    query: SearchQuery,
    session_id: str | None,
    role: str | None,
    limit: int,
) -> list[SearchHit] | None:
    """Search through ``index`` after bringing it up to the logs; ``None`` when it cannot
    answer for them (missing, or behind while the store may not write): then the caller
    scans the logs instead."""
    if not index.exists(db):
        return None
    if writable:
        index.reconcile(db)
    else:
        db.execute("BEGIN")
        try:
            behind, gone = index.stale(db)
        finally:
            db.execute("COMMIT")
        if behind or gone:
            return None
    if session_id is not None and not index.holds(db, session_id):
        raise SessionNotFoundError(session_id, where)
    return index.search(db, query, session_id, role, limit)


__all__ = [
    "Fts5Index",
    "IndexedLog",
    "indexed_search",
]
