"""Attachment bytes in SQLite: table ``dsh_attachments`` keyed by the hex SHA-256, in
the database of dsh's layout 1 itself, or in a companion file
``<database>.dsh-attachments`` beside a harness schema-17 database (the harness
refuses tables it does not know in its own file), as the mailbox does.

A put is one transaction under ``synchronous=FULL`` (WAL): committed, the bytes survive
a power cut, and only then may a log cite them. ``INSERT OR IGNORE`` keeps an object
stored once; a row whose bytes no longer hash right is replaced.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from dsh_llm._attachment_ref import attachment_id_of

ATTACHMENTS_TABLE = """
CREATE TABLE IF NOT EXISTS dsh_attachments (
    sha256 TEXT PRIMARY KEY,
    data BLOB NOT NULL
) WITHOUT ROWID
"""


def companion_path(database: Path) -> Path:
    """Where the attachments of a harness schema-17 database live."""
    return database.with_name(f"{database.name}.dsh-attachments")


class SqliteBlobs:
    """Objects in table ``dsh_attachments`` of a connection (autocommit mode). A
    read-only connection to a database without the table holds no object."""

    def __init__(self, db: sqlite3.Connection, *, writable: bool) -> None:
        self._db = db
        if writable:
            db.execute(ATTACHMENTS_TABLE)

    @classmethod
    def companion(cls, database: Path, *, read_only: bool, busy_timeout: float) -> SqliteBlobs:
        """The companion file of a schema-17 database (a writable store creates it; a
        read-only one opens an existing one read-only)."""
        path = companion_path(database)
        if read_only:
            uri = f"{path.absolute().as_uri()}?mode=ro"
            return cls(sqlite3.connect(uri, uri=True, check_same_thread=False), writable=False)
        db = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        path.chmod(0o600)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        return cls(db, writable=True)

    def put(self, sha256: str, data: bytes) -> None:
        """Store ``data`` under its digest unless an intact copy is there already."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute(
                "SELECT data FROM dsh_attachments WHERE sha256 = ?", (sha256,)
            ).fetchone()
            if row is None or attachment_id_of(bytes(row[0])) != f"sha256:{sha256}":
                db.execute(
                    "INSERT OR REPLACE INTO dsh_attachments (sha256, data) VALUES (?, ?)",
                    (sha256, data),
                )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def get(self, sha256: str) -> bytes | None:
        """The object's bytes, or ``None``."""
        try:
            row = self._db.execute(
                "SELECT data FROM dsh_attachments WHERE sha256 = ?", (sha256,)
            ).fetchone()
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                return None
            raise
        return None if row is None else bytes(row[0])

    def has(self, sha256: str) -> bool:
        """Whether an object with this digest is stored."""
        try:
            row = self._db.execute(
                "SELECT 1 FROM dsh_attachments WHERE sha256 = ?", (sha256,)
            ).fetchone()
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                return False
            raise
        return row is not None

    def close(self) -> None:
        """Close a companion connection (the layout closes its own)."""
        self._db.close()


__all__ = ["ATTACHMENTS_TABLE", "SqliteBlobs", "companion_path"]
