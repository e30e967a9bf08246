"""Issue 33: the followers of one store share one LISTEN connection. PostgreSQL wakes
every listening connection for every notification and each passes it to its client,
so a connection per follower multiplied each flush's work by the followers. One
connection still wakes each follower for its own session's events, and closes with
the last follower."""

from __future__ import annotations

import asyncio

from session_stores.scenarios import complete_turn, store_completed_turn

from dsh_session.stores import PostgresSessionStore
from session_stores_pg.test_pg_follow_reconnect import _Consumer, _listeners


async def test_followers_of_one_store_share_one_listen_connection(postgres_dsn: str) -> None:
    async with (
        PostgresSessionStore(postgres_dsn) as writer,
        PostgresSessionStore(postgres_dsn, mode="read") as reader,
    ):
        sessions = [await store_completed_turn(writer) for _ in range(3)]
        loaded = [await writer.load(session.id) for session in sessions]
        before = await asyncio.to_thread(_listeners, postgres_dsn)
        # Two followers of the first session, one of each other; no fallback poll
        # within the test, so every delivery after the first read is a wake-up.
        followed = [loaded[0], *loaded]
        consumers = [_Consumer(reader.follow(s.id, poll_interval=600)) for s in followed]
        try:
            for consumer, session in zip(consumers, followed, strict=True):
                await consumer.until(session.seq, timeout=30)
            listening = await asyncio.to_thread(_listeners, postgres_dsn)
            assert len(listening - before) == 1
            for _ in range(3):
                for session in loaded:
                    complete_turn(session)
                    await writer.flush(session)
                for consumer, session in zip(consumers, followed, strict=True):
                    await consumer.until(session.seq, timeout=30)
        finally:
            for consumer in consumers:
                await consumer.stop()
        for consumer, session in zip(consumers, followed, strict=True):
            assert consumer.error is None
            assert consumer.seen == list(session.events)
        assert await asyncio.to_thread(_listeners, postgres_dsn) == before  # closed
