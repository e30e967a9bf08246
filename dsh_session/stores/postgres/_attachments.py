"""Attachment bytes in PostgreSQL: table ``dsh_attachments(sha256, data)`` beside the
logs, created (like the search and mailbox tables) by the first writable store.

A put commits before :meth:`SessionStore.save_attachment` returns, so a flush citing
the attachment can only follow durable bytes; ``ON CONFLICT`` keeps one row per hash,
and a row whose bytes no longer hash right is replaced.
"""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from dsh_llm._attachment_ref import attachment_id_of
from dsh_session.stores.postgres._fencing import Connection

_TABLE = """
CREATE TABLE IF NOT EXISTS dsh_attachments (
    sha256 TEXT PRIMARY KEY,
    data BYTEA NOT NULL
)
"""


def create_table(connection: Connection) -> None:
    """Give the schema the attachments table when it has none."""
    with connection.transaction():
        # CREATE TABLE IF NOT EXISTS races itself: one process at a time.
        connection.execute("SELECT pg_advisory_xact_lock(hashtext('dsh_attachments'))")
        connection.execute(_TABLE)


def put(pool: ConnectionPool[Connection], sha256: str, data: bytes) -> None:
    """Store ``data`` under its digest unless an intact copy is there already."""
    with pool.connection() as connection, connection.transaction():
        row = connection.execute(
            "SELECT data FROM dsh_attachments WHERE sha256 = %s FOR UPDATE", (sha256,)
        ).fetchone()
        if row is not None and attachment_id_of(bytes(row[0])) == f"sha256:{sha256}":
            return
        connection.execute(
            "INSERT INTO dsh_attachments (sha256, data) VALUES (%s, %s) "
            "ON CONFLICT (sha256) DO UPDATE SET data = EXCLUDED.data",
            (sha256, data),
        )


def get(pool: ConnectionPool[Connection], sha256: str) -> bytes | None:
    """The stored bytes, or ``None`` (also when no store created the table yet)."""
    with pool.connection() as connection:
        exists = connection.execute("SELECT to_regclass('dsh_attachments') IS NOT NULL").fetchone()
        if not exists or not exists[0]:
            return None
        row = connection.execute(
            "SELECT data FROM dsh_attachments WHERE sha256 = %s", (sha256,)
        ).fetchone()
    return None if row is None else bytes(row[0])


__all__ = ["create_table", "get", "put"]
