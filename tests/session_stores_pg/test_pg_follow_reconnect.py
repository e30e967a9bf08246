"""Issue 34 #9: a PostgreSQL follower survives losing its LISTEN connection. Killed
with ``pg_terminate_backend``, it died with a raw ``psycopg.OperationalError``. Now it
listens again on a new connection, polls meanwhile when it cannot, and delivers every
event exactly once, in order; any error it raises is a dsh ``SessionError``."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncGenerator
from typing import Any

import psycopg
import pytest
from session_stores.scenarios import complete_turn, store_completed_turn

from dsh_session import LogEvent, Session
from dsh_session.errors import SessionError
from dsh_session.stores import PostgresSessionStore

LISTENERS = (
    "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %%' "
    "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
)


def _pids(dsn: str, query: str) -> list[int]:
    """The backends ``query`` (over ``pg_stat_activity``) finds, in its order."""
    with psycopg.connect(dsn, autocommit=True) as connection:
        return [int(row[0]) for row in connection.execute(query).fetchall()]


def _listeners(dsn: str) -> set[int]:
    """The backends holding a ``LISTEN`` (other than this query's own)."""
    return set(_pids(dsn, LISTENERS))


async def _some_pids(dsn: str, query: str, timeout: float = 30) -> list[int]:
    """The backends ``query`` finds, once it finds any."""
    async with asyncio.timeout(timeout):
        while not (pids := await asyncio.to_thread(_pids, dsn, query)):
            await asyncio.sleep(0.05)
    return pids


def _terminate(dsn: str, pid: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as connection:
        row = connection.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()
    assert row is not None and row[0] is True


async def _new_listener(dsn: str, known: set[int], timeout: float = 30) -> int:
    """The pid of a LISTEN connection not in ``known``, once one is there."""
    async with asyncio.timeout(timeout):
        while True:
            fresh = await asyncio.to_thread(_listeners, dsn) - known
            if fresh:
                [pid] = fresh
                return pid
            await asyncio.sleep(0.05)


class _Consumer:
    """Drains a follower in a task, keeping every event and the error that ended it."""

    def __init__(self, follower: AsyncGenerator[LogEvent, None]) -> None:
        self.follower = follower
        self.seen: list[LogEvent] = []
        self.error: BaseException | None = None
        self.task = asyncio.create_task(self._drain())

    async def _drain(self) -> None:
        try:
            async for event in self.follower:
                self.seen.append(event)
        except Exception as error:
            self.error = error

    async def until(self, count: int, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while len(self.seen) < count:
                assert self.error is None, repr(self.error)
                await asyncio.sleep(0.02)

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.follower.aclose()


async def _write_turn(writer: PostgresSessionStore, loaded: Session) -> None:
    complete_turn(loaded)
    await writer.flush(loaded)


async def test_follow_listens_again_after_its_connection_is_terminated(
    postgres_dsn: str,
) -> None:
    async with (
        PostgresSessionStore(postgres_dsn) as writer,
        PostgresSessionStore(postgres_dsn, mode="read") as reader,
    ):
        session = await store_completed_turn(writer)
        loaded = await writer.load(session.id)
        known = await asyncio.to_thread(_listeners, postgres_dsn)
        # A fallback poll far longer than the test waits: delivery after a reconnect
        # can only come from a NOTIFY on the new LISTEN connection (or the read that
        # follows listening again).
        consumer = _Consumer(reader.follow(session.id, poll_interval=600))
        try:
            await consumer.until(session.seq, timeout=30)
            listener = await _new_listener(postgres_dsn, known)
            for _ in range(3):
                await asyncio.to_thread(_terminate, postgres_dsn, listener)
                known.add(listener)
                await _write_turn(writer, loaded)  # while it is gone or coming back
                await consumer.until(loaded.seq, timeout=30)
                listener = await _new_listener(postgres_dsn, known)  # listening again
                await _write_turn(writer, loaded)  # woken by NOTIFY on the new one
                await consumer.until(loaded.seq, timeout=30)
        finally:
            await consumer.stop()
    assert consumer.error is None
    assert [event.seq for event in consumer.seen] == list(range(loaded.seq))
    assert consumer.seen == list(loaded.events)


async def test_follow_polls_while_it_cannot_listen_then_listens_again(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_connect = psycopg.AsyncConnection.connect
    refusals = {"left": 0}

    async def connect(*args: Any, **kwargs: Any) -> psycopg.AsyncConnection[Any]:
        if refusals["left"]:
            refusals["left"] -= 1
            raise psycopg.OperationalError("simulated: the server refuses connections")
        return await real_connect(*args, **kwargs)

    monkeypatch.setattr(psycopg.AsyncConnection, "connect", connect)
    async with (
        PostgresSessionStore(postgres_dsn) as writer,
        PostgresSessionStore(postgres_dsn, mode="read") as reader,
    ):
        session = await store_completed_turn(writer)
        loaded = await writer.load(session.id)
        known = await asyncio.to_thread(_listeners, postgres_dsn)
        consumer = _Consumer(reader.follow(session.id, poll_interval=0.1))
        try:
            await consumer.until(session.seq, timeout=30)
            listener = await _new_listener(postgres_dsn, known)
            refusals["left"] = 10  # about a second of refused reconnects
            await asyncio.to_thread(_terminate, postgres_dsn, listener)
            known.add(listener)
            for _ in range(3):  # delivered by polling while it cannot listen
                await _write_turn(writer, loaded)
                await consumer.until(loaded.seq, timeout=30)
            await _new_listener(postgres_dsn, known)  # then it listens again
            assert refusals["left"] == 0
            await _write_turn(writer, loaded)
            await consumer.until(loaded.seq, timeout=30)
        finally:
            await consumer.stop()
    assert consumer.error is None
    assert consumer.seen == list(loaded.events)


async def test_a_follower_that_cannot_read_raises_a_session_error(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every error a follower sees is dsh's: here the first LISTEN cannot be opened.
    async def refuse(*args: Any, **kwargs: Any) -> psycopg.AsyncConnection[Any]:
        raise psycopg.OperationalError("simulated: the server refuses connections")

    async with PostgresSessionStore(postgres_dsn) as writer:
        session = await store_completed_turn(writer)
    monkeypatch.setattr(psycopg.AsyncConnection, "connect", refuse)
    async with PostgresSessionStore(postgres_dsn, mode="read") as reader:
        follower = reader.follow(session.id)
        with pytest.raises(SessionError, match="cannot listen"):
            await anext(follower)
        await follower.aclose()


READERS = (
    "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT s.head, e.seq%%' "
    "AND backend_type = 'client backend' AND pid <> pg_backend_pid() "
    "ORDER BY backend_start DESC"
)
"""Backends whose last statement was a follower's read, newest first (the pool's
connection that read in the meantime is older than the next reading connection)."""


async def test_follow_reads_again_after_its_reading_connection_is_terminated(
    postgres_dsn: str,
) -> None:
    """Followers read on a connection of their own, on the event loop; killed between
    reads, the next read goes through the store's pool and the one after opens a new
    connection: every event still arrives once, in order, and no error surfaces."""
    async with (
        PostgresSessionStore(postgres_dsn) as writer,
        PostgresSessionStore(postgres_dsn, mode="read") as reader,
    ):
        session = await store_completed_turn(writer)
        loaded = await writer.load(session.id)
        consumer = _Consumer(reader.follow(session.id, poll_interval=600))
        try:
            await consumer.until(session.seq, timeout=30)
            killed: set[int] = set()
            for _ in range(3):
                async with asyncio.timeout(30):
                    while not (found := await asyncio.to_thread(_pids, postgres_dsn, READERS)) or (
                        found[0] in killed
                    ):
                        await asyncio.sleep(0.05)
                pid = found[0]
                await asyncio.to_thread(_terminate, postgres_dsn, pid)
                killed.add(pid)
                await _write_turn(writer, loaded)  # read through the pool
                await consumer.until(loaded.seq, timeout=30)
                await _write_turn(writer, loaded)  # on a new reading connection
                await consumer.until(loaded.seq, timeout=30)
        finally:
            await consumer.stop()
    assert consumer.error is None
    assert consumer.seen == list(loaded.events)


NOTIFIERS = (
    "SELECT pid FROM pg_stat_activity WHERE query LIKE 'NOTIFY %%' "
    "AND backend_type = 'client backend'"
)


async def test_a_writer_notifies_again_after_its_notifying_connection_is_terminated(
    postgres_dsn: str,
) -> None:
    """The notifier sends on a connection of its own; killed, the batch that finds it
    broken goes out again on a new connection, and so does the next flush's: the
    follower is woken for both flushes (it never polls here)."""
    async with (
        PostgresSessionStore(postgres_dsn) as writer,
        PostgresSessionStore(postgres_dsn, mode="read") as reader,
    ):
        session = await store_completed_turn(writer)
        loaded = await writer.load(session.id)
        consumer = _Consumer(reader.follow(session.id, poll_interval=600))
        try:
            await consumer.until(loaded.seq, timeout=30)
            for _ in range(3):
                for pid in await _some_pids(postgres_dsn, NOTIFIERS):
                    await asyncio.to_thread(_terminate, postgres_dsn, pid)
                await asyncio.sleep(0.2)  # the writer's socket learns it is closed
                await _write_turn(writer, loaded)  # lost, or sent on a new connection
                await _write_turn(writer, loaded)  # on the new connection
                await consumer.until(loaded.seq, timeout=30)
        finally:
            await consumer.stop()
    assert consumer.error is None
    assert consumer.seen == list(loaded.events)


async def test_flushes_return_while_the_notifying_backend_is_stopped(
    postgres_dsn: str,
) -> None:
    """A flush sends its notification without waiting for the server's answer (issue
    33): with the notifier's backend stopped (``SIGSTOP``), flushes still return, the
    heads they announce collect behind the batch in flight, and once the backend runs
    again the follower (which never polls here) is woken for the newest one."""
    async with (
        PostgresSessionStore(postgres_dsn) as writer,
        PostgresSessionStore(postgres_dsn, mode="read") as reader,
    ):
        session = await store_completed_turn(writer)
        loaded = await writer.load(session.id)
        consumer = _Consumer(reader.follow(session.id, poll_interval=600))
        try:
            await consumer.until(loaded.seq, timeout=30)
            [pid] = await _some_pids(postgres_dsn, NOTIFIERS)
            try:
                os.kill(pid, signal.SIGSTOP)
            except (PermissionError, ProcessLookupError) as error:
                pytest.skip(f"cannot stop the server's backend {pid}: {error}")
            try:
                async with asyncio.timeout(60):
                    for _ in range(20):
                        await _write_turn(writer, loaded)
            finally:
                os.kill(pid, signal.SIGCONT)
            await consumer.until(loaded.seq, timeout=30)
        finally:
            await consumer.stop()
    assert consumer.error is None
    assert consumer.seen == list(loaded.events)
