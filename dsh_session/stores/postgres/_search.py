"""The PostgreSQL search index: ``tsvector`` documents under a GIN index.

``dsh_search_docs(session_id, seq, message_id, role, body, doc)`` holds one row per
surface event, ``doc`` the ``to_tsvector('simple', ...)`` of the tokens dsh cut from
the message's text (``dsh_session._search``), so PostgreSQL matches the very tokens
SQLite and the scan match; ``dsh_search_state(session_id, through)`` the head each
session was indexed up to. Both are created ``IF NOT EXISTS`` by every writable store,
so a database made before search gains them; each flush writes its documents and
the new head in the flush's own statement (riders of its fence, ``fencing.py``), and
a search first re-indexes any session whose head moved without the index (written by
an earlier dsh), from its log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dsh_session._search import SearchDocument, SearchHit, SearchQuery, documents_of
from dsh_session._search.scan import hit_of
from dsh_session.errors import SessionNotFoundError
from dsh_session.events import LogEvent
from dsh_session.stores.postgres._fencing import (
    Connection,
    Rider,
    Statements,
    fenced,
    fenced_params,
)

_INDEX_LOCK = 0x6473685F736561  # "dsh_sea": serialises concurrent creators of the tables

_TABLES = """
CREATE TABLE IF NOT EXISTS dsh_search_docs (
    session_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    message_id TEXT NOT NULL,
    role TEXT NOT NULL,
    body TEXT NOT NULL,
    doc TSVECTOR NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX IF NOT EXISTS dsh_search_docs_doc ON dsh_search_docs USING GIN (doc);
CREATE TABLE IF NOT EXISTS dsh_search_state (
    session_id TEXT PRIMARY KEY,
    through BIGINT NOT NULL
);
"""

_ADD_DOCS = (
    "INSERT INTO dsh_search_docs (session_id, seq, message_id, role, body, doc) "
    "SELECT fence.id, d.seq, d.message_id, d.role, d.body, to_tsvector('simple', d.terms) "
    "FROM fence, unnest(%b::bigint[], %b::text[], %b::text[], %b::text[], %b::text[]) "
    "AS d(seq, message_id, role, body, terms)"
)
_SET_STATE = (
    "INSERT INTO dsh_search_state (session_id, through) SELECT fence.id, %s FROM fence "
    "ON CONFLICT (session_id) DO UPDATE SET through = excluded.through"
)
FORGET: Statements = (
    ("DELETE FROM dsh_search_docs WHERE session_id = %s", ()),
    ("DELETE FROM dsh_search_state WHERE session_id = %s", ()),
)
"""What deletes a session from the index (each takes the session id)."""


def create_tables(connection: Connection) -> None:
    """Add the index tables if missing, in one transaction."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_INDEX_LOCK,))
        connection.execute(_TABLES.encode())


def has_tables(connection: Connection) -> bool:
    found = connection.execute("SELECT to_regclass('dsh_search_state') IS NOT NULL").fetchone()
    return bool(found and found[0])


def index_rows(session_id: str, events: Sequence[LogEvent], head: int) -> tuple[Rider, ...]:
    """The riders of a write that index appended events and record the new head."""
    docs = documents_of(session_id, events)
    columns = (
        [document.seq for document in docs],
        [document.message_id for document in docs],
        [document.role for document in docs],
        [document.body for document in docs],
        [document.terms for document in docs],
    )
    return (Rider(_ADD_DOCS, columns), Rider(_SET_STATE, (head,)))


def _run(connection: Connection, statements: Statements) -> None:
    for sql, rows in statements:
        if rows:
            connection.cursor().executemany(sql.encode(), rows)


def _index(connection: Connection, session_id: str, riders: Sequence[Rider]) -> None:
    """Run ``riders`` for ``session_id`` (whose row the caller has locked)."""
    fence = "SELECT %s::text AS id"
    connection.execute(fenced(fence, riders).encode(), fenced_params((session_id,), riders))


_STALE = """
SELECT s.id FROM dsh_sessions s LEFT JOIN dsh_search_state st ON st.session_id = s.id
WHERE st.through IS DISTINCT FROM s.head
UNION ALL
SELECT st.session_id FROM dsh_search_state st
WHERE NOT EXISTS (SELECT 1 FROM dsh_sessions s WHERE s.id = st.session_id)
"""


def is_stale(connection: Connection) -> bool:
    return connection.execute(_STALE + " LIMIT 1").fetchone() is not None


def reconcile(connection: Connection, read: Any, *, everything: bool = False) -> int:
    """Re-index every session whose head moved without the index (all of them with
    ``everything``) and drop the sessions no log holds; ``read(connection, id, head)``
    gives a session's events. Each session in its own transaction, its row locked
    against appends meanwhile. The number of sessions re-indexed or dropped."""
    if everything:
        with connection.transaction():
            connection.execute("DELETE FROM dsh_search_docs")
            connection.execute("DELETE FROM dsh_search_state")
        stale = [sid for (sid,) in connection.execute("SELECT id FROM dsh_sessions ORDER BY id")]
    else:
        stale = [sid for (sid,) in connection.execute(_STALE)]
    for session_id in stale:
        with connection.transaction():
            _run(connection, [(sql, [(session_id,)]) for sql, _ in FORGET])
            found = connection.execute(
                "SELECT head FROM dsh_sessions WHERE id = %s FOR SHARE", (session_id,)
            ).fetchone()
            if found is not None:
                head = int(found[0])
                events = read(connection, session_id, head)
                _index(connection, session_id, index_rows(session_id, events, head))
    return len(stale)


def search(
    connection: Connection,
    query: SearchQuery,
    session_id: str | None,
    role: str | None,
    limit: int,
    where: str,
) -> list[SearchHit]:
    """The best matches by ``ts_rank``, ties by session and seq."""
    if session_id is not None:
        found = connection.execute(
            "SELECT 1 FROM dsh_search_state WHERE session_id = %s", (session_id,)
        ).fetchone()
        if found is None:
            raise SessionNotFoundError(session_id, where)
    conditions = ""
    params: list[Any] = [query.tsquery()]
    if session_id is not None:
        conditions += " AND session_id = %s"
        params.append(session_id)
    if role is not None:
        conditions += " AND role = %s"
        params.append(role)
    params.append(limit)
    rows = connection.execute(
        "SELECT session_id, seq, message_id, role, body FROM dsh_search_docs, "
        "to_tsquery('simple', %s) AS q "
        f"WHERE doc @@ q{conditions} "
        "ORDER BY ts_rank(doc, q) DESC, session_id, seq LIMIT %s",
        params,
    ).fetchall()
    return [hit_of(query, SearchDocument(*row)) for row in rows]


__all__ = [
    "FORGET",
    "create_tables",
    "has_tables",
    "index_rows",
    "is_stale",
    "reconcile",
    "search",
]
