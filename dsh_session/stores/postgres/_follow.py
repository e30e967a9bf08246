"""Following a session on PostgreSQL: ``LISTEN``, read what is new, wait for ``NOTIFY``.

The followers of one store in one event loop share one asynchronous connection that
listens on the channel every flush notifies (``fencing.CHANNEL``, payload ``<session
id> <head>``): PostgreSQL wakes every listening connection for every notification,
and each would hand it to its client, so a connection per follower multiplied the
work of each flush by the number of followers. The shared :class:`Listener` reads
each notification once and wakes only the followers of the session it names whose
next seq the head has passed.

A follower joins the listener (which is listening by then) *before* its first read,
and clears its wake-up before each read, so an event committed after a read always
wakes it. Each wake-up (a notification, or the fallback timeout) reads the events
past the last one delivered, in one statement on the listener's second asynchronous
connection, on the event loop: a worker thread and a pooled connection would add two
thread wake-ups and a checkout between a notification and its events, and on a busy
machine each wake-up waits to be scheduled. Only a large read is parsed on a worker
thread; should that connection fail, the read goes through the store's read pool as
any other read does. The seq checks are those of every other follower
(``dsh_session/stores/_follow.py``), so order and completeness never depend on a
notification arriving: a lost one costs latency, not events. A lost LISTEN connection
(a terminated backend, a server restart) is replaced by a new one, after which every
follower reads again; while none can be opened the followers poll.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import Protocol

import psycopg
from psycopg.rows import TupleRow

from dsh_session._header import SessionId
from dsh_session._parse import parse_events
from dsh_session.errors import StoreError
from dsh_session.events import LogEvent
from dsh_session.stores._base import INLINE_BATCH_LIMIT
from dsh_session.stores._follow import FollowedStore, in_order
from dsh_session.stores.postgres._fencing import CHANNEL
from dsh_session.stores.postgres._reads import FROM_SEQ, texts_from

AsyncConnection = psycopg.AsyncConnection[TupleRow]


class ListenedStore(FollowedStore, Protocol):
    """What a listener uses of a PostgreSQL store, besides a follower's needs."""

    dsn: str
    _listeners: dict[asyncio.AbstractEventLoop, Listener]


class _Follower:
    """One follower as the listener sees it: where it is, and how to wake it."""

    def __init__(self, session_id: SessionId, next_seq: int, fallback: float) -> None:
        self.session_id = session_id
        self.next_seq = next_seq
        self.fallback = fallback
        self.woken = asyncio.Event()


class Listener:
    """The LISTEN connection of one store's followers in one event loop, and the task
    that reads its notifications. It lives while it has followers."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._followers: dict[SessionId, set[_Follower]] = {}
        self._connection: AsyncConnection | None = None
        self._reader: AsyncConnection | None = None
        """Where the followers read (opened at the first read, shared by them)."""
        self._closing: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._opening = asyncio.Lock()

    async def join(self, follower: _Follower, where: str) -> None:
        """Start waking ``follower``; the first follower opens the connection (or
        fails with :class:`StoreError`)."""
        async with self._opening:
            if self._task is None:
                try:
                    self._connection = await _listen(self._dsn)
                except psycopg.Error as error:
                    raise StoreError(
                        f"{where}: cannot listen for session {follower.session_id!r}: {error}"
                    ) from error
                self._task = asyncio.create_task(self._run(), name="dsh postgres listener")
            self._followers.setdefault(follower.session_id, set()).add(follower)

    def wake_all(self) -> None:
        """Wake every follower (their store is closing)."""
        for same in self._followers.values():
            for follower in same:
                follower.woken.set()

    async def leave(self, follower: _Follower) -> bool:
        """Stop waking ``follower``; the last one to leave closes the connection.
        Return whether the listener is done."""
        same = self._followers.get(follower.session_id, set())
        same.discard(follower)
        if not same:
            self._followers.pop(follower.session_id, None)
        if self._followers or self._task is None:
            return not self._followers
        task, self._task = self._task, None
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        for connection in (self._connection, self._reader):
            if connection is not None:
                await _close(connection)
        self._connection = self._reader = None
        return True

    async def read(
        self, store: ListenedStore, session_id: SessionId, from_seq: int
    ) -> list[LogEvent]:
        """The session's committed events from ``from_seq`` on, read on the event loop
        (through the store's pool on a worker thread when that connection fails)."""
        try:
            connection = await self._reading_connection()
        except psycopg.Error:
            connection = None
        try:
            if connection is not None:
                cursor = await connection.execute(FROM_SEQ, (from_seq, session_id))
                rows = await cursor.fetchall()
        except psycopg.Error:
            connection = None  # the next read opens another
        except BaseException:  # cancelled in the middle of a read: its state is unknown
            self._drop_reader()
            raise
        if connection is None:
            self._drop_reader()
            return await asyncio.to_thread(
                store._reading, f"session {session_id!r}", store._read_events, session_id, from_seq
            )
        texts = texts_from(rows, session_id, from_seq, repr(store))
        if len(texts) <= INLINE_BATCH_LIMIT:
            return parse_events(texts)
        return await asyncio.to_thread(parse_events, texts)

    async def _reading_connection(self) -> AsyncConnection:
        async with self._opening:
            if self._reader is None:
                self._reader = await psycopg.AsyncConnection.connect(self._dsn, autocommit=True)
            return self._reader

    def _drop_reader(self) -> None:
        """Close the reading connection in the background (a read may have left it
        mid-query); the next read opens another."""
        reader, self._reader = self._reader, None
        if reader is not None:
            closing = asyncio.get_running_loop().create_task(_close(reader))
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)

    async def _run(self) -> None:
        while True:
            if self._connection is None:
                try:
                    self._connection = await _listen(self._dsn)
                except psycopg.Error:
                    await asyncio.sleep(self._retry())
                    continue
                for group in self._followers.values():  # read what came meanwhile
                    for follower in group:
                        follower.woken.set()
            try:
                async for note in self._connection.notifies():
                    self._announced(note.payload)
            except psycopg.Error:  # e.g. pg_terminate_backend, a server restart
                lost, self._connection = self._connection, None
                await _close(lost)

    def _announced(self, payload: str) -> None:
        """Wake the followers a ``<session id> <head>`` notification concerns."""
        session_id, _, head = payload.rpartition(" ")
        group = self._followers.get(SessionId(session_id))
        if group and head.isdigit():
            for follower in group:
                if follower.next_seq < int(head):
                    follower.woken.set()

    def _retry(self) -> float:
        """Seconds between attempts to listen again: the shortest fallback asked for."""
        fallbacks = [f.fallback for group in self._followers.values() for f in group]
        return min(fallbacks, default=1.0)


async def listen_events(
    store: ListenedStore, session_id: SessionId, from_seq: int, fallback: float
) -> AsyncGenerator[LogEvent, None]:
    """Follow ``session_id`` in ``store`` from ``from_seq`` on."""
    store._check_open()
    loop = asyncio.get_running_loop()
    listener = store._listeners.setdefault(loop, Listener(store.dsn))
    follower = _Follower(session_id, from_seq, fallback)
    try:
        await listener.join(follower, repr(store))
        while not store._closed:
            follower.woken.clear()
            start = follower.next_seq
            events = await listener.read(store, session_id, start)
            in_order(events, start, session_id, repr(store))
            for event in events:
                yield event
                follower.next_seq += 1
            if not events:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(follower.woken.wait(), fallback)
    finally:
        if await listener.leave(follower) and store._listeners.get(loop) is listener:
            del store._listeners[loop]


async def _listen(dsn: str) -> AsyncConnection:
    """A new connection listening on the channel every flush notifies."""
    connection: AsyncConnection = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    try:
        await connection.execute(f"LISTEN {CHANNEL}")
    except BaseException:
        await _close(connection)
        raise
    return connection


async def _close(connection: AsyncConnection) -> None:
    """Close a listening connection, which may already be broken."""
    with contextlib.suppress(psycopg.Error, OSError):
        await connection.close()


__all__ = [
    "ListenedStore",
    "Listener",
    "listen_events",
]
