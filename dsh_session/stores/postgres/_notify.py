"""Notifications sent after the commit they announce, without waiting for the disk.

PostgreSQL lets one notifying transaction commit at a time: it holds a database-wide
lock from before its commit record is written until the commit returns, so a
``NOTIFY`` inside a durable transaction makes every notifying commit wait out the
others' fsyncs one by one, where plain commits share them (group commit). A flush
(and a mailbox put) therefore commits first, durably and without notifying, and
then sends its notification in a transaction of its own with ``synchronous_commit``
off: that commit holds the lock for microseconds, not an fsync. A notification
carries nothing durable (PostgreSQL drops undelivered ones at a restart anyway), and
it goes out only after what it announces is committed and visible.

A notification can still be lost (the sender dies between the two commits, or the
second one fails), so every listener also polls: a lost one costs latency, never
data.
"""

from __future__ import annotations

import contextlib
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus

_IDLE = TransactionStatus.IDLE


def notify_committed(connection: psycopg.Connection[Any], channel: str, payload: str) -> None:
    """Send ``NOTIFY channel, payload`` in one round trip, outside any transaction of
    the caller's (``connection`` is in autocommit mode). Raises ``psycopg.Error``
    when it fails, leaving the connection outside a transaction."""
    try:
        with connection.pipeline():
            connection.execute("BEGIN")
            connection.execute("SET LOCAL synchronous_commit = off")
            connection.execute("SELECT pg_notify(%s, %s)", (channel, payload))
            connection.execute("COMMIT")
    except psycopg.Error:
        with contextlib.suppress(psycopg.Error):
            if (
                not connection.broken
                and connection.info.transaction_status != TransactionStatus.IDLE
            ):
                connection.execute("ROLLBACK")
        raise


__all__ = ["notify_committed"]
