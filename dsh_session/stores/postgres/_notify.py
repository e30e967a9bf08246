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
to its :class:`Notifier`, which sends everything pending as one simple query (one
``NOTIFY`` per session, its newest head; one implicit transaction, one message) on a
connection of its own, whose transactions never wait for the disk
(``synchronous_commit`` is off for the whole connection). When that connection is
free, the flushing thread itself sends the query without waiting for the socket or
the answer: handing each notification to another thread cost a wake-up and two GIL
hand-overs, more than the notification itself. While a batch is in flight (waiting
for the lock, say), newer heads collect and the notifier's thread sends them together
once its answer is in: flushes never wait for the lock, and the number of notifying
commits is bounded by how fast the lock can be handed over, not by the flush rate.
A notification carries nothing durable (PostgreSQL drops undelivered ones at a
restart anyway), and it goes out only after what it announces is committed and
visible. It can still be lost (the process dies first, or sending fails): every
listener also polls, so a lost one costs latency, never data. A batch that finds its
connection broken is sent once more on a new one.
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import threading
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.pq import ConnStatus, ExecStatus, TransactionStatus

logger = logging.getLogger(__name__)

_IDLE = TransactionStatus.IDLE
_CONNECT_TIMEOUT = 10
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
    """Sends ``<session id> <head>`` notifications on ``channel``, coalesced per
    session: from the flushing thread when the connection is free, else from a thread
    of its own, which opens the connection (after the first :meth:`announce`) and ends
    with :meth:`close`."""

    def __init__(self, dsn: str, channel: str, where: str) -> None:
        self._dsn = dsn
        self._notify = f"NOTIFY {channel}, ".encode()
        self._where = where
        self._pending: dict[str, int] = {}
        self._sent: dict[str, int] = {}
        """The batch in flight: sent (or still in the send buffer), its answer unread."""
        self._unflushed = False
        """Part of the batch in flight is still in libpq's send buffer."""
        self._resent = False
        """What is pending or in flight holds a batch a broken connection lost: should
        the next connection break too, it is dropped (a batch goes out at most twice)."""
        self._connection: psycopg.Connection[Any] | None = None
        self._busy = False
        """The thread has the connection (opening it, or awaiting an answer); until it
        lets go, :meth:`announce` only queues."""
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closing = False

    def announce(self, session_id: str, head: int) -> None:
        """Queue the news that ``session_id`` holds ``head`` events, and send what is
        queued at once when the connection is free (never blocks)."""
        with self._changed:
            if self._closing:
                return
            if head > self._pending.get(session_id, -1):
                self._pending[session_id] = head
            if self._busy or self._connection is None or not self._answered():
                self._wake_thread()
                return
            self._send()
            if self._unflushed or self._connection is None:
                self._wake_thread()

    def close(self) -> None:
        """Send what is pending, then stop the thread (waiting at most the connect
        timeout and a bit: a notification is never worth a hung close)."""
        with self._changed:
            self._closing = True
            thread = self._thread
            if thread is not None:
                self._busy = True
                self._changed.notify()
        if thread is not None:
            thread.join(_CONNECT_TIMEOUT + 5)

    def _wake_thread(self) -> None:
        self._busy = True
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"dsh notifier {self._where}", daemon=True
            )
            self._thread.start()
        self._changed.notify()

    def _run(self) -> None:
        try:
            while True:
                with self._changed:
                    while not self._busy:
                        self._changed.wait()
                    if self._connection is not None and not self._sent and self._pending:
                        self._send()
                    if not self._sent and not self._pending:
                        if self._closing:
                            return
                        self._busy = False
                        continue
                    connection = self._connection
                if connection is None:
                    self._connect()
                else:
                    self._wait_for_answer(connection)
        finally:
            with self._changed:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None

    def _connect(self) -> None:
        """Open the connection (its transactions never wait for the disk), or drop
        what is pending: a notification is never worth a retry loop."""
        try:
            connection = psycopg.connect(
                self._dsn, autocommit=True, connect_timeout=_CONNECT_TIMEOUT
            )
            connection.execute("SET synchronous_commit = off")
            connection.pgconn.nonblocking = 1
        except psycopg.Error as error:
            with self._changed:
                self._give_up(self._pending, error)
                self._pending, self._resent = {}, False
            return
        with self._changed:
            self._connection = connection

    def _wait_for_answer(self, connection: psycopg.Connection[Any]) -> None:
        """Wait (without the lock: only this thread uses the connection while busy)
        until the socket can take the rest of the batch or has an answer, then read."""
        with selectors.DefaultSelector() as selector:
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if self._unflushed else 0)
            selector.register(connection.pgconn.socket, events)
            selector.select()
        with self._changed:
            self._answered()

    def _send(self) -> None:
        """Send what is pending as one simple query (one implicit transaction), without
        waiting for the socket or the answer."""
        assert self._connection is not None
        batch, self._pending = self._pending, {}
        self._sent = batch
        query = b"; ".join(self._notify + _literal(f"{sid} {head}") for sid, head in batch.items())
        try:
            self._connection.pgconn.send_query(query)
            self._unflushed = self._connection.pgconn.flush() == 1
        except psycopg.Error as error:
            self._lost(error)

    def _answered(self) -> bool:
        """Whether the connection is free (open, no batch in flight): read what the
        server sent (the answer of the batch in flight, or that it closed the
        connection), without waiting. A batch that finds the connection broken is
        queued again once (a terminated connection is found only by using it); one the
        server ran though its answer was lost goes out twice: harmless, followers read
        from their seq."""
        assert self._connection is not None
        pgconn = self._connection.pgconn
        failed = ""
        try:
            if self._unflushed:
                self._unflushed = pgconn.flush() == 1
                if self._unflushed:
                    return False
            pgconn.consume_input()
            while not pgconn.is_busy():
                result = pgconn.get_result()
                if result is None:
                    break
                if result.status != ExecStatus.COMMAND_OK:
                    failed = failed or result.get_error_message()
            else:
                return False
        except psycopg.Error as error:
            failed = str(error)
        if pgconn.status != ConnStatus.OK:
            self._lost(failed)
        else:
            if failed:
                self._give_up(self._sent, failed)
            self._sent, self._resent = {}, False
        return self._connection is not None and not self._sent

    def _lost(self, error: object) -> None:
        """The connection broke with a batch in flight: close it, and queue the batch
        again unless it was already sent again."""
        assert self._connection is not None
        self._connection.close()
        self._connection = None
        if self._sent and self._resent:
            self._give_up(self._sent, error)
            self._resent = False
        elif self._sent:
            for sid, head in self._sent.items():
                if head > self._pending.get(sid, -1):
                    self._pending[sid] = head
            self._resent = True
        self._sent, self._unflushed = {}, False

    def _give_up(self, batch: dict[str, int], error: object) -> None:
        if batch:
            logger.warning(
                "%s: could not wake the followers of %d sessions: %s",
                self._where,
                len(batch),
                error,
            )


def _literal(text: str) -> bytes:
    """``text`` as an SQL string literal (payloads are session ids, of
    ``[A-Za-z0-9._-]``, and digits: the doubling is only a safeguard)."""
    return b"'" + text.replace("'", "''").encode() + b"'"


__all__ = ["Notifier", "notify_committed"]
