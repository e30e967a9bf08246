"""Notifications sent after the commits they announce, without waiting for the disk,
and off the flush's path.

PostgreSQL lets one notifying transaction commit at a time: it holds a database-wide
lock from before its commit record is written until the commit returns. A ``NOTIFY``
inside a flush's transaction made notifying flushes wait out each other's fsyncs one
by one, where plain commits share them (group commit). A notification in a
transaction of its own after each flush, with ``synchronous_commit`` off, holds the
lock for less than a millisecond, but on a loaded machine every hand-over of a lock
that eight processes queue for waits for the next holder to be scheduled: flushes
still queued behind each other's notifications.

So a store's flush commits durably without notifying and hands ``(session, head)``
to its :class:`Notifier`, whose thread sends everything pending as one notifying
statement (one ``pg_notify`` per session, its newest head) on a connection of its
own, whose transactions never wait for the disk (``synchronous_commit`` is off for
the whole connection, so each batch is one statement and one round trip). While
that statement waits for the lock, newer heads collect and go out
together in the next one: flushes never wait for the lock, and the number of
notifying commits is bounded by how fast the lock can be handed over, not by the
flush rate. A notification carries nothing durable (PostgreSQL drops undelivered ones
at a restart anyway), and it goes out only after what it announces is committed and
visible. It can still be lost (the process dies first, or sending fails): every
listener also polls, so a lost one costs latency, never data. A batch that fails on
a connection found broken is sent once more on a new one.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus

logger = logging.getLogger(__name__)

_IDLE = TransactionStatus.IDLE
_CONNECT_TIMEOUT = 10
_NOTIFY = b"SELECT pg_notify(%s, payload) FROM unnest(%b::text[]) AS payload"
"""Seconds the notifier waits for a connection before it gives up on a batch."""


def notify_committed(
    connection: psycopg.Connection[Any], channel: str, payloads: Sequence[str]
) -> None:
    """Send ``NOTIFY channel, payload`` for each of ``payloads`` as one transaction that
    does not wait for the disk, in one round trip (``connection`` is in autocommit
    mode). Raises ``psycopg.Error`` when it fails, leaving no transaction open."""
    try:
        with connection.pipeline():
            connection.execute("BEGIN")
            connection.execute("SET LOCAL synchronous_commit = off")
            connection.execute(
                "SELECT pg_notify(%s, payload) FROM unnest(%s::text[]) AS payload",
                (channel, list(payloads)),
            )
            connection.execute("COMMIT")
    except psycopg.Error:
        with contextlib.suppress(psycopg.Error):
            if not connection.broken and connection.info.transaction_status != _IDLE:
                connection.execute("ROLLBACK")
        raise


class Notifier:
    """Sends ``<session id> <head>`` notifications on ``channel`` from a thread of its
    own, coalesced per session; the thread and its connection start with the first
    :meth:`announce` and end with :meth:`close`."""

    def __init__(self, dsn: str, channel: str, where: str) -> None:
        self._dsn = dsn
        self._channel = channel
        self._where = where
        self._pending: dict[str, int] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closing = False

    def announce(self, session_id: str, head: int) -> None:
        """Queue the news that ``session_id`` holds ``head`` events (never blocks)."""
        with self._changed:
            if self._closing:
                return
            if head > self._pending.get(session_id, -1):
                self._pending[session_id] = head
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"dsh notifier {self._where}", daemon=True
                )
                self._thread.start()
            self._changed.notify()

    def close(self) -> None:
        """Send what is pending, then stop the thread (waiting at most the connect
        timeout and a bit: a notification is never worth a hung close)."""
        with self._changed:
            self._closing = True
            self._changed.notify()
            thread = self._thread
        if thread is not None:
            thread.join(_CONNECT_TIMEOUT + 5)

    def _run(self) -> None:
        connection: psycopg.Connection[Any] | None = None
        try:
            while True:
                with self._changed:
                    while not self._pending and not self._closing:
                        self._changed.wait()
                    if not self._pending:
                        return
                    batch, self._pending = self._pending, {}
                payloads = [f"{sid} {head}" for sid, head in batch.items()]
                connection = self._send(connection, payloads)
        finally:
            if connection is not None:
                connection.close()

    def _send(
        self, connection: psycopg.Connection[Any] | None, payloads: list[str]
    ) -> psycopg.Connection[Any] | None:
        """Send one batch, once more on a new connection when the one in hand turns out
        to be broken (a terminated connection is found only by using it). A batch the
        server ran though its answer was lost goes out twice: harmless, followers read
        from their own seq. Return the connection to keep, or ``None``."""
        for attempt in (1, 2):
            try:
                if connection is None or connection.closed or connection.broken:
                    connection = psycopg.connect(
                        self._dsn, autocommit=True, connect_timeout=_CONNECT_TIMEOUT
                    )
                    connection.execute("SET synchronous_commit = off")
                connection.execute(_NOTIFY, (self._channel, payloads))
                return connection
            except psycopg.Error as error:
                if connection is not None:
                    connection.close()
                    connection = None
                if attempt == 2:
                    logger.warning(
                        "%s: could not wake the followers of %d sessions: %s",
                        self._where,
                        len(payloads),
                        error,
                    )
        return None


__all__ = ["Notifier", "notify_committed"]
