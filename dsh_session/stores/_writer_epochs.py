"""Writer epochs: the fencing token of SQL stores, checked inside every write.

Each SQL-stored session has a row ``dsh_session_writers(session_id, epoch,
claimed_by)``. A writer claims the session by raising the epoch by one and remembers
the value; every batch it writes first re-checks, in the same transaction as its
inserts, that the row still holds that epoch. A writer that was taken over therefore
cannot add a single row after the takeover: its transaction rolls back with a
:class:`SessionConflictError`. The lock file (``ownership.py``) decides who may claim
while the owner lives; the epoch is what the database itself enforces, also where
the lock cannot see (a database reached through another path, a host sharing the
file over a network).

The statements are plain SQL that SQLite (3.35+) and PostgreSQL both accept, with
the driver's placeholder filled in, so a PostgreSQL store reuses this module as is.
The check is an ``UPDATE`` rather than a ``SELECT`` because an update also takes the
row lock, so under PostgreSQL's read-committed isolation a concurrent claim waits for
the batch to commit instead of slipping in between check and insert. SQLite's layout 1,
whose ``BEGIN IMMEDIATE`` holds the whole database's write lock, carries the check in
the first insert of each batch instead (a statement fewer) and takes its error from
:meth:`WriterEpochs.conflict`.
"""

from __future__ import annotations

from typing import Any, Protocol

from dsh_session._header import SessionId
from dsh_session.errors import SessionConflictError


class Cursor(Protocol):
    """The part of a DB-API cursor (or sqlite3 connection) the epochs use."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def fetchone(self) -> Any: ...


class WriterEpochs:
    """Claim and check writer epochs over one DB-API connection's SQL dialect.

    ``placeholder`` is the driver's parameter marker: ``?`` for sqlite3, ``%s`` for
    psycopg. Every method runs inside the caller's transaction and never commits.
    """

    def __init__(self, placeholder: str = "?") -> None:
        p = placeholder
        self._create = (
            "CREATE TABLE IF NOT EXISTS dsh_session_writers ("
            "session_id TEXT PRIMARY KEY, epoch BIGINT NOT NULL, claimed_by TEXT NOT NULL)"
        )
        self._claim = (
            f"INSERT INTO dsh_session_writers (session_id, epoch, claimed_by) VALUES ({p}, 1, {p}) "
            "ON CONFLICT (session_id) DO UPDATE SET epoch = dsh_session_writers.epoch + 1, "
            "claimed_by = excluded.claimed_by RETURNING epoch"
        )
        self._check = (
            f"UPDATE dsh_session_writers SET epoch = epoch WHERE session_id = {p} AND epoch = {p}"
        )
        self._current = f"SELECT epoch, claimed_by FROM dsh_session_writers WHERE session_id = {p}"
        self._forget = f"DELETE FROM dsh_session_writers WHERE session_id = {p}"

    def claim(self, cursor: Cursor, session_id: SessionId, claimed_by: str) -> int:
        """Take the session over from any earlier writer; return the new epoch."""
        cursor.execute(self._create)
        cursor.execute(self._claim, (session_id, claimed_by))
        epoch: int = cursor.fetchone()[0]
        return epoch

    def check(self, cursor: Cursor, session_id: SessionId, epoch: int, where: str) -> None:
        """Raise :class:`SessionConflictError` unless ``epoch`` is still the session's."""
        cursor.execute(self._check, (session_id, epoch))
        if cursor.rowcount != 1:
            raise self.conflict(cursor, session_id, epoch, where)

    def conflict(
        self, cursor: Cursor, session_id: SessionId, epoch: int, where: str
    ) -> SessionConflictError:
        """The error for a writer at ``epoch`` that found the session's epoch moved (by
        :meth:`check`, or by a write that carries the check itself), naming the holder
        now recorded."""
        cursor.execute(self._current, (session_id,))
        row = cursor.fetchone()
        now, holder = (row[0], row[1]) if row is not None else (None, None)
        return SessionConflictError(
            f"session {session_id!r} in {where} was taken over by another writer "
            f"({holder or 'holder unknown'}, epoch {now}; this writer holds epoch {epoch}); "
            "nothing of this batch was written",
            session_id=session_id,
            holder=holder,
        )

    def forget(self, cursor: Cursor, session_id: SessionId) -> None:
        """Drop a deleted session's epoch: a writer still holding one finds no row to
        match, so its next batch is refused like a taken-over writer's."""
        cursor.execute(self._create)
        cursor.execute(self._forget, (session_id,))


__all__ = [
    "Cursor",
    "WriterEpochs",
]
