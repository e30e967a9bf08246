"""The mailbox on PostgreSQL: table ``dsh_mailbox`` beside the sessions, and a
``NOTIFY dsh_mailbox, '<session id>'`` once a put has committed (in a transaction of
its own, ``notify.py``), so an owner listening on the channel drains as soon as the
entry is durable.

A put serialises on a transaction-level advisory lock of its session, so arrival
numbers are dense and in commit order, and the key's unique index makes a repeated
delivery find the first one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import psycopg
from psycopg.rows import TupleRow

from dsh_session._header import SessionId
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._records import MailboxAnswer, MailboxEntry, StoredEntry
from dsh_session.errors import StoreError
from dsh_session.stores.postgres._notify import notify_committed

logger = logging.getLogger(__name__)

MAILBOX_CHANNEL = "dsh_mailbox"

_TABLE = """
CREATE TABLE IF NOT EXISTS dsh_mailbox (
    session_id TEXT NOT NULL,
    arrival BIGINT NOT NULL,
    key TEXT NOT NULL,
    entry TEXT NOT NULL,
    answer TEXT,
    PRIMARY KEY (session_id, arrival),
    UNIQUE (session_id, key)
);
CREATE INDEX IF NOT EXISTS dsh_mailbox_waiting ON dsh_mailbox (session_id, arrival)
WHERE answer IS NULL
"""
"""The table, and an index of the unanswered entries only: what a worker's scan and an
owner's drain read, so their cost follows what waits, not every delivery ever made."""

_COLUMNS = "SELECT arrival, entry, answer FROM dsh_mailbox"


class PostgresMailbox(Mailbox):
    """Entries in table ``dsh_mailbox`` of the database at ``dsn``."""

    def __init__(self, dsn: str, where: str) -> None:
        super().__init__(poll_interval=1.0)  # a fallback: NOTIFY wakes the owner
        self.dsn = dsn
        self._where = where
        self._listener: psycopg.AsyncConnection[TupleRow] | None = None
        try:
            self._db = psycopg.connect(dsn, autocommit=True)
            with self._db.transaction():
                # CREATE TABLE IF NOT EXISTS races itself: one process at a time.
                self._db.execute("SELECT pg_advisory_xact_lock(hashtext('dsh_mailbox'))")
                self._db.execute(_TABLE)
        except psycopg.Error as error:
            raise StoreError(f"mailbox of {where}: cannot prepare: {error}") from error

    def __repr__(self) -> str:
        return f"PostgresMailbox({self._where})"

    def _put(self, entry: MailboxEntry) -> tuple[StoredEntry, bool]:
        sid = entry.session_id
        with self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"dsh_mailbox {sid}",))
            found = self._find(sid, entry.key)
            if found is not None:
                return found, False
            row = self._db.execute(
                "INSERT INTO dsh_mailbox (session_id, arrival, key, entry) "
                "SELECT %s, COALESCE(MAX(arrival) + 1, 0), %s, %s FROM dsh_mailbox "
                "WHERE session_id = %s RETURNING arrival",
                (sid, entry.key, entry.dump(), sid),
            ).fetchone()
            assert row is not None
        try:  # once the entry is durable; the owner also polls, so a loss only delays
            notify_committed(self._db, MAILBOX_CHANNEL, [sid])
        except psycopg.Error as error:
            logger.warning("%s: could not wake the owner of %r: %s", self, sid, error)
        return StoredEntry(entry, int(row[0])), True

    def _entries(self, session_id: SessionId, from_arrival: int = 0) -> list[StoredEntry]:
        rows = self._db.execute(
            f"{_COLUMNS} WHERE session_id = %s AND arrival >= %s ORDER BY arrival".encode(),
            (session_id, from_arrival),
        ).fetchall()
        return [_stored(session_id, row) for row in rows]

    def _pending(self, session_id: SessionId) -> list[StoredEntry]:
        rows = self._db.execute(
            f"{_COLUMNS} WHERE session_id = %s AND answer IS NULL ORDER BY arrival".encode(),
            (session_id,),
        ).fetchall()
        return [_stored(session_id, row) for row in rows]

    def _find(self, session_id: SessionId, key: str) -> StoredEntry | None:
        found = self._db.execute(
            f"{_COLUMNS} WHERE session_id = %s AND key = %s".encode(), (session_id, key)
        ).fetchone()
        return None if found is None else _stored(session_id, found)

    def _answer(self, session_id: SessionId, key: str, answer: MailboxAnswer) -> None:
        self._db.execute(
            "UPDATE dsh_mailbox SET answer = %s WHERE session_id = %s AND key = %s "
            "AND answer IS NULL",
            (answer.dump(), session_id, key),
        )

    def _waiting(self) -> list[SessionId]:
        rows = self._db.execute(
            "SELECT DISTINCT session_id FROM dsh_mailbox WHERE answer IS NULL"
        ).fetchall()
        return [SessionId(sid) for (sid,) in rows]

    async def wait(self, timeout: float) -> None:
        """Return at the first ``NOTIFY`` of a put, at the latest after ``timeout``.
        The first call starts listening (and returns at once: a put may have come
        before it listened)."""
        if self._listener is None:
            try:
                self._listener = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
                await self._listener.execute(f"LISTEN {MAILBOX_CHANNEL}")
            except psycopg.Error:
                self._listener = None
                await asyncio.sleep(min(timeout, self.poll_interval))
            return
        try:
            async for _ in self._listener.notifies(timeout=timeout, stop_after=1):
                pass
        except psycopg.Error:  # lost: listen again on the next call
            lost, self._listener = self._listener, None
            with contextlib.suppress(psycopg.Error, OSError):
                await lost.close()

    async def close(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(psycopg.Error, OSError):
                await self._listener.close()
            self._listener = None
        await super().close()

    def _close(self) -> None:
        self._db.close()


def _stored(session_id: SessionId, row: tuple[object, ...]) -> StoredEntry:
    arrival, entry, answer = row
    return StoredEntry(
        MailboxEntry.load(session_id, str(entry)),
        int(str(arrival)),
        None if answer is None else MailboxAnswer.load(str(answer)),
    )


__all__ = ["MAILBOX_CHANNEL", "PostgresMailbox"]
