"""Following a session on PostgreSQL: ``LISTEN``, read what is new, wait for ``NOTIFY``.

The follower opens its own asynchronous connection and listens on the channel every
flush notifies (``fencing.CHANNEL``) *before* its first read, so an event committed
after that read always wakes it. Each wake-up (a notification naming the session, or
the fallback timeout) reads the events past the last one delivered through the
store's read pool; reads and seq checks are those of every other follower
(``dsh_session/stores/_follow.py``), so order and completeness never depend on a
notification arriving: a lost one costs latency, not events. A lost LISTEN connection
(a terminated backend, a server restart) is replaced by a new one, listening before
the read that follows it; while none can be opened the follower polls.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import Protocol

import psycopg
from psycopg.rows import TupleRow

from dsh_session._header import SessionId
from dsh_session.errors import StoreError
from dsh_session.events import LogEvent
from dsh_session.stores._follow import FollowedStore, in_order
from dsh_session.stores.postgres._fencing import CHANNEL


class ListenedStore(FollowedStore, Protocol):
    """What a listener uses of a PostgreSQL store, besides a follower's needs."""

    dsn: str


async def listen_events(
    store: ListenedStore, session_id: SessionId, from_seq: int, fallback: float
) -> AsyncGenerator[LogEvent, None]:
    """Follow ``session_id`` in ``store`` from ``from_seq`` on."""
    store._check_open()
    try:
        listener: psycopg.AsyncConnection[TupleRow] | None = await _listen(store.dsn)
    except psycopg.Error as error:
        raise StoreError(f"{store}: cannot listen for session {session_id!r}: {error}") from error
    prefix = f"{session_id} "
    next_seq = from_seq
    try:
        while not store._closed:
            start = next_seq
            events = await asyncio.to_thread(
                store._reading, f"session {session_id!r}", store._read_events, session_id, start
            )
            in_order(events, next_seq, session_id, repr(store))
            for event in events:
                yield event
                next_seq += 1
            if events:
                continue
            if listener is None:
                # The LISTEN connection was lost: listen again, then read what came
                # meanwhile; while that fails, poll every ``fallback`` seconds.
                try:
                    listener = await _listen(store.dsn)
                except psycopg.Error:
                    await asyncio.sleep(fallback)
                continue
            try:
                async for note in listener.notifies(timeout=fallback):
                    if _announces_past(note.payload, prefix, next_seq):
                        break
            except psycopg.Error:  # e.g. pg_terminate_backend, a server restart
                lost, listener = listener, None
                await _close(lost)
    finally:
        if listener is not None:
            await _close(listener)


async def _listen(dsn: str) -> psycopg.AsyncConnection[TupleRow]:
    """A new connection listening on the channel every flush notifies."""
    connection: psycopg.AsyncConnection[TupleRow] = await psycopg.AsyncConnection.connect(
        dsn, autocommit=True
    )
    try:
        await connection.execute(f"LISTEN {CHANNEL}")
    except BaseException:
        await _close(connection)
        raise
    return connection


async def _close(connection: psycopg.AsyncConnection[TupleRow]) -> None:
    """Close a listening connection, which may already be broken."""
    with contextlib.suppress(psycopg.Error, OSError):
        await connection.close()


def _announces_past(payload: str, prefix: str, next_seq: int) -> bool:
    """Whether a notification says the session now holds events from ``next_seq`` on."""
    head = payload[len(prefix) :] if payload.startswith(prefix) else ""
    return head.isdigit() and int(head) > next_seq


__all__ = [
    "ListenedStore",
    "listen_events",
]
