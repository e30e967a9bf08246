"""The SQLite search index: FTS5 over the documents of every stored log.

Three tables, all ``IF NOT EXISTS`` so a database written before search gains them
when a writable store opens it: ``dsh_search_docs`` (one row per surface event: session,
seq, message id, role, the message's text), ``dsh_search_fts`` (a contentless FTS5
index of the text's tokens, sharing the documents' rowids) and ``dsh_search_state``
(per session, the *stamp* of the log the index matches).

A layout either writes an append's documents in the append's own transaction
(:meth:`add`: schema 17's index file) or leaves them to the next search (layout 1).
Before each search the stamps are compared with the logs' (:meth:`reconcile`) and every
session that differs is brought up to its log: from where the index left off when the
layout can read its log on from a stamp (layout 1: appends not yet indexed, a crash
between an append and its indexing), else whole (schema 17 appended by the TypeScript
harness, or left behind by a crash between the two files' commits); a session gone
from the log leaves the index. Each catch-up is one transaction that writes the
documents and the new stamp together, so an event is indexed once or not at all, and
the index never answers with anything the log does not hold; :meth:`rebuild` makes it
again from the logs alone.

The layout supplies what the index cannot know, as a :class:`IndexedLog`: how to read
every session's stamp and one session's events, all inside the caller's transaction.
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


_CATCH_UP_EVENTS = 2_000
"""Events a catch-up indexes per transaction, so that indexing a long backlog holds the
database's write lock (which appends wait for) briefly at a time."""


class IndexedLog(Protocol):
    """What a layout tells the index about its logs; all run inside a transaction the
    index holds, so the stamps and the events are of one snapshot."""

    def stamps(self, db: sqlite3.Connection) -> dict[str, str]:
        """Every stored session's stamp: a text that changes whenever its log does."""
        ...

    def stamp(self, db: sqlite3.Connection, session_id: str) -> str | None:
        """One session's stamp; ``None`` when no log holds the session."""
        ...

    def read(self, db: sqlite3.Connection, session_id: str) -> tuple[Sequence[LogEvent], str]:
        """One session's events and its stamp."""
        ...

    def read_after(
        self, db: sqlite3.Connection, session_id: str, stamp: str | None, limit: int
    ) -> tuple[Sequence[LogEvent], str] | None:
        """At most ``limit`` events logged after the log state ``stamp`` names (from the
        start: ``None``) and the stamp of the log up to the last of them; ``None`` when
        the layout cannot read on from a stamp (the index then reads the log whole)."""
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

    def stale(
        self, db: sqlite3.Connection, session_id: str | None = None
    ) -> tuple[list[str], list[str]]:
        """Sessions whose log changed since they were indexed (or were never indexed),
        and sessions the index holds that no log does: of every session, or of
        ``session_id`` alone."""
        state = f"SELECT session_id, stamp FROM {self._s}.dsh_search_state"
        if session_id is None:
            logged = self._log.stamps(db)
            indexed = dict(db.execute(state))
        else:
            stamp = self._log.stamp(db, session_id)
            logged = {} if stamp is None else {session_id: stamp}
            indexed = dict(db.execute(f"{state} WHERE session_id = ?", (session_id,)))
        behind = sorted(sid for sid, stamp in logged.items() if indexed.get(sid) != stamp)
        gone = sorted(set(indexed) - set(logged))
        return behind, gone

    # --- whole operations (each its own write transaction) ---------------------------

    def reconcile(self, db: sqlite3.Connection, session_id: str | None = None) -> int:
        """Bring the index up to the logs (or to the log of ``session_id`` alone, all a
        search scoped to it reads); the number of sessions caught up or dropped. A look
        in a read transaction first: most searches find nothing to do and take no write
        lock. The index's commits skip the durable sync (see :func:`_unsynced`)."""
        db.execute("BEGIN")
        try:
            behind, gone = self.stale(db, session_id)
        finally:
            db.execute("COMMIT")
        if not behind and not gone:
            return 0
        with _unsynced(db, self._s):
            for sid in [*gone, *behind]:
                while not self._catch_up(db, sid):
                    pass
        return len(behind) + len(gone)

    def _catch_up(self, db: sqlite3.Connection, session_id: str) -> bool:
        """In one transaction, index what the session logged since the index's stamp
        (at most :data:`_CATCH_UP_EVENTS` events; the whole log when the layout cannot
        read on from a stamp), or drop a session no log holds; whether the index now
        matches its log. The stamps are read again inside the transaction: another
        store may have caught up or appended since the look."""
        with _write_transaction(db):
            logged = self._log.stamp(db, session_id)
            found = db.execute(
                f"SELECT stamp FROM {self._s}.dsh_search_state WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            indexed: str | None = None if found is None else found[0]
            if logged is None:
                self.forget(db, session_id)
                return True
            if indexed == logged:
                return True
            after = self._log.read_after(db, session_id, indexed, _CATCH_UP_EVENTS)
            if after is None or not after[0]:  # no events past a stamp that differs: whole
                self._index_whole(db, session_id)
                return True
            events, stamp = after
            if indexed is None:
                self.forget(db, session_id)  # documents without a stamp: none, normally
            self.add(db, session_id, events, stamp)
            return stamp == logged

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
def _unsynced(db: sqlite3.Connection, schema: str) -> Iterator[None]:
    """Commit the index's own transactions with ``synchronous = NORMAL``: under
    write-ahead logging they stay atomic and ordered, and a power cut can only take the
    last of them, each with the stamp it wrote, so those sessions are caught up again
    by the next search. The log's own commits keep their setting (restored after)."""
    kept = db.execute(f"PRAGMA {schema}.synchronous").fetchone()[0]
    db.execute(f"PRAGMA {schema}.synchronous = NORMAL")
    try:
        yield
    finally:
        db.execute(f"PRAGMA {schema}.synchronous = {int(kept)}")


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
    """Search through ``index`` after bringing it up to the logs the search reads (every
    log, or ``session_id``'s); ``None`` when it cannot answer for them (missing, or
    behind while the store may not write): then the caller scans the logs instead."""
    if not index.exists(db):
        return None
    if writable:
        index.reconcile(db, session_id)
    else:
        db.execute("BEGIN")
        try:
            behind, gone = index.stale(db, session_id)
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
