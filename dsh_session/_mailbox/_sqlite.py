"""The mailbox in SQLite: table ``dsh_mailbox``, in the database of dsh's layout 1
itself, or in a companion file ``<database>.dsh-mailbox`` beside a harness schema-17
database (the harness refuses tables it does not know in its own file).

Each put is one ``BEGIN IMMEDIATE`` transaction under ``synchronous=FULL`` (WAL), so the
key check and the insert are atomic against other processes and durable on commit.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from dsh_session._header import SessionId
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._records import MailboxAnswer, MailboxEntry, StoredEntry
from dsh_session.errors import StoreError

MAILBOX_TABLE = """
CREATE TABLE IF NOT EXISTS dsh_mailbox (
    session_id TEXT NOT NULL,
    arrival INTEGER NOT NULL,
    key TEXT NOT NULL,
    entry TEXT NOT NULL,
    answer TEXT,
    PRIMARY KEY (session_id, arrival),
    UNIQUE (session_id, key)
) WITHOUT ROWID
"""


WAITING_INDEX = """
CREATE INDEX IF NOT EXISTS dsh_mailbox_waiting ON dsh_mailbox (session_id, arrival)
WHERE answer IS NULL
"""
"""The unanswered entries only: what a worker's scan and an owner's drain read, so
their cost follows what waits, not every delivery ever made."""

_COLUMNS = "SELECT arrival, entry, answer FROM dsh_mailbox"


def create_mailbox_table(db: sqlite3.Connection) -> None:
    """Give a database the mailbox table and its index of unanswered entries when it
    lacks them (an older file gains them)."""
    db.execute(MAILBOX_TABLE)
    db.execute(WAITING_INDEX)


def companion_path(database: Path) -> Path:
    """Where the mailbox of a harness schema-17 database lives."""
    return database.with_name(f"{database.name}.dsh-mailbox")


class SqliteMailbox(Mailbox):
    """Entries in table ``dsh_mailbox`` of the SQLite file at ``path``."""

    def __init__(self, path: Path, *, busy_timeout: float = 5.0) -> None:
        super().__init__()
        self.path = path
        try:
            self._db = sqlite3.connect(
                path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
            if self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
                raise StoreError(f"mailbox {path}: the database cannot use write-ahead logging")
            self._db.execute("PRAGMA synchronous=FULL")
            create_mailbox_table(self._db)
        except sqlite3.Error as error:
            raise StoreError(f"mailbox {path}: cannot open: {error}") from error

    def __repr__(self) -> str:
        return f"SqliteMailbox({str(self.path)!r})"

    def _put(self, entry: MailboxEntry) -> tuple[StoredEntry, bool]:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            found = self._find(entry.session_id, entry.key)
            if found is not None:
                db.execute("COMMIT")
                return found, False
            (arrival,) = db.execute(
                "SELECT COALESCE(MAX(arrival) + 1, 0) FROM dsh_mailbox WHERE session_id = ?",
                (entry.session_id,),
            ).fetchone()
            db.execute(
                "INSERT INTO dsh_mailbox (session_id, arrival, key, entry) VALUES (?, ?, ?, ?)",
                (entry.session_id, arrival, entry.key, entry.dump()),
            )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return StoredEntry(entry, arrival), True

    def _entries(self, session_id: SessionId, from_arrival: int = 0) -> list[StoredEntry]:
        rows = self._db.execute(
            f"{_COLUMNS} WHERE session_id = ? AND arrival >= ? ORDER BY arrival",
            (session_id, from_arrival),
        ).fetchall()
        return [_stored(session_id, row) for row in rows]

    def _pending(self, session_id: SessionId) -> list[StoredEntry]:
        rows = self._db.execute(
            f"{_COLUMNS} INDEXED BY dsh_mailbox_waiting "
            "WHERE session_id = ? AND answer IS NULL ORDER BY arrival",
            (session_id,),
        ).fetchall()
        return [_stored(session_id, row) for row in rows]

    def _find(self, session_id: SessionId, key: str) -> StoredEntry | None:
        found = self._db.execute(
            f"{_COLUMNS} WHERE session_id = ? AND key = ?", (session_id, key)
        ).fetchone()
        return None if found is None else _stored(session_id, found)

    def _answer(self, session_id: SessionId, key: str, answer: MailboxAnswer) -> None:
        self._db.execute(
            "UPDATE dsh_mailbox SET answer = ? WHERE session_id = ? AND key = ? AND answer IS NULL",
            (answer.dump(), session_id, key),
        )

    def _waiting(self) -> list[SessionId]:
        rows = self._db.execute(
            "SELECT DISTINCT session_id FROM dsh_mailbox WHERE answer IS NULL"
        ).fetchall()
        return [SessionId(sid) for (sid,) in rows]

    def _close(self) -> None:
        self._db.close()


def _stored(session_id: SessionId, row: tuple[int, str, str | None]) -> StoredEntry:
    arrival, entry, answer = row
    return StoredEntry(
        MailboxEntry.load(session_id, entry),
        arrival,
        None if answer is None else MailboxAnswer.load(answer),
    )


__all__ = [
    "MAILBOX_TABLE",
    "WAITING_INDEX",
    "SqliteMailbox",
    "companion_path",
    "create_mailbox_table",
]
