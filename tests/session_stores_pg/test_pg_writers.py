"""Two writers on one PostgreSQL session: exactly one wins, the other gets
SessionConflictError and writes nothing; a stale writer (an older epoch) can never
append; take-over fences the old owner; a dead owner's claim ends with its
connection; modes and migrations refuse what they must."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from session_stores.scenarios import complete_turn, store_completed_turn

from dsh_session import TurnEndEvent
from dsh_session._session import Session
from dsh_session.errors import SessionConflictError, StoreError, StoreNotFoundError
from dsh_session.stores import PostgresSessionStore, open_store
from dsh_session.stores.postgres._schema import LAYOUT_VERSION

TESTS_DIR = Path(__file__).resolve().parent.parent


def _count(dsn: str, session_id: str) -> tuple[int, int]:
    """(stored events, recorded head) of a session."""
    with psycopg.connect(dsn) as connection:
        rows = connection.execute(
            "SELECT (SELECT count(*) FROM dsh_events WHERE session_id = %s), "
            "(SELECT head FROM dsh_sessions WHERE id = %s)",
            (session_id, session_id),
        ).fetchone()
    assert rows is not None
    return int(rows[0]), int(rows[1])


async def test_a_second_load_is_refused_at_once_naming_the_owner(postgres_dsn: str) -> None:
    async with PostgresSessionStore(postgres_dsn) as setup:
        session = await store_completed_turn(setup)
    owner, other = PostgresSessionStore(postgres_dsn), PostgresSessionStore(postgres_dsn)
    loaded = await owner.load(session.id)
    with pytest.raises(SessionConflictError) as raised:
        await asyncio.wait_for(other.load(session.id), timeout=30)
    assert raised.value.holder == f"pid {os.getpid()} on {os.uname()[1]}"
    complete_turn(loaded)
    await owner.flush(loaded)  # the refused load disturbed nothing
    owner.detach(loaded)
    again = await other.load(session.id)  # detach released it
    assert list(again.events[: loaded.seq]) == list(loaded.events)
    await other.close()
    await owner.close()


async def test_take_over_fences_the_old_owner_and_its_retries(postgres_dsn: str) -> None:
    async with PostgresSessionStore(postgres_dsn) as setup:
        session = await store_completed_turn(setup)
    stale, new = PostgresSessionStore(postgres_dsn), PostgresSessionStore(postgres_dsn)
    old = await stale.load(session.id)
    complete_turn(old)
    await stale.flush(old)
    flushed = old.seq
    complete_turn(old)  # pending when the take-over comes

    taken = await new.load(session.id, take_over=True)
    assert list(taken.events[:flushed]) == list(old.events[:flushed])  # nothing lost
    for _ in range(2):  # the retry is refused too, as itself
        with pytest.raises(SessionConflictError) as raised:
            await stale.flush(old)
        assert type(raised.value) is SessionConflictError
    assert _count(postgres_dsn, session.id) == (taken.seq, taken.seq)
    complete_turn(taken)
    await new.flush(taken)
    with pytest.raises(SessionConflictError, match="not durable"):
        await stale.close()
    await new.close()
    async with PostgresSessionStore(postgres_dsn, mode="read") as reader:
        final, _ = await reader.read(session.id)
    assert final.events == taken.events


async def test_a_stale_epoch_can_never_append(postgres_dsn: str) -> None:
    """A writer whose epoch was raised behind its back (another host's claim) writes
    nothing, even at the head it expects."""
    async with PostgresSessionStore(postgres_dsn) as store:
        session = await store_completed_turn(store)
        loaded = await store.load(session.id)
        with psycopg.connect(postgres_dsn, autocommit=True) as intruder:
            intruder.execute(
                "UPDATE dsh_sessions SET epoch = epoch + 1, owner = 'elsewhere' WHERE id = %s",
                (session.id,),
            )
        complete_turn(loaded)
        with pytest.raises(SessionConflictError) as raised:
            await store.flush(loaded)
        assert raised.value.holder == "elsewhere"
        assert _count(postgres_dsn, session.id) == (session.seq + 1, session.seq + 1)
        store._tracked.clear()  # drop the refused events instead of retrying at close


async def test_two_writers_creating_one_id_exactly_one_wins(postgres_dsn: str) -> None:
    stores = [PostgresSessionStore(postgres_dsn) for _ in range(4)]
    sessions = [Session.create("contested") for _ in stores]
    for store, session in zip(stores, sessions, strict=True):
        store.attach(session)
        complete_turn(session, tool_output=f"writer {id(store)}")
    results = await asyncio.gather(
        *(store.flush(session) for store, session in zip(stores, sessions, strict=True)),
        return_exceptions=True,
    )
    winners = [i for i, result in enumerate(results) if result is None]
    assert len(winners) == 1
    assert all(isinstance(r, StoreError) and "already exists" in str(r) for r in results if r)
    async with PostgresSessionStore(postgres_dsn, mode="read") as reader:
        stored, _ = await reader.read("contested")
    assert stored.events == sessions[winners[0]].events
    for store in stores:
        store._tracked.clear()
        await store.close()


async def test_a_killed_owner_process_gives_the_session_up(postgres_dsn: str) -> None:
    async with PostgresSessionStore(postgres_dsn) as setup:
        session = await store_completed_turn(setup)
    script = (
        "import asyncio, sys\n"
        "from dsh_session.stores import PostgresSessionStore\n"
        "async def main():\n"
        "    store = PostgresSessionStore(sys.argv[1])\n"
        "    await store.load(sys.argv[2])\n"
        "    print('owned', flush=True)\n"
        "    await asyncio.sleep(600)\n"
        "asyncio.run(main())\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, postgres_dsn, session.id], stdout=subprocess.PIPE
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"owned\n"
        async with PostgresSessionStore(postgres_dsn) as other:
            with pytest.raises(SessionConflictError, match=f"pid {child.pid} "):
                await other.load(session.id)
            child.send_signal(signal.SIGKILL)
            child.wait()
            for _ in range(200):  # the server notices the closed socket promptly
                try:
                    await other.load(session.id)
                    break
                except SessionConflictError:
                    await asyncio.sleep(0.05)
            else:
                pytest.fail("the dead owner's claim outlived it")
    finally:
        child.kill()
        child.wait()


async def test_follow_delivers_every_event_in_order_from_another_process(
    postgres_dsn: str,
) -> None:
    async with PostgresSessionStore(postgres_dsn) as setup:
        session = await store_completed_turn(setup)
    stored = session.seq
    async with PostgresSessionStore(postgres_dsn, mode="read") as reader:
        follower = reader.follow(session.id, from_seq=2)
        first = await anext(follower)  # the follower listens before the writer starts
        writer = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "session_stores_pg.follow_writer",
                postgres_dsn,
                session.id,
                "5",
            ],
            cwd=TESTS_DIR,
            stdout=subprocess.PIPE,
        )
        seen = [first]
        try:
            async with asyncio.timeout(120):
                async for event in follower:
                    seen.append(event)
                    if isinstance(event, TurnEndEvent) and event.data.turn == 6:
                        break
        finally:
            await follower.aclose()
        out, _ = writer.communicate(timeout=60)
        final, _ = await reader.read(session.id)
    assert int(out) == final.seq > stored
    assert [event.seq for event in seen] == list(range(2, final.seq))
    assert seen == list(final.events[2:])


async def test_modes_and_layout_versions(postgres_dsn: str) -> None:
    with pytest.raises(StoreNotFoundError):
        PostgresSessionStore(postgres_dsn, mode="open")
    with pytest.raises(StoreNotFoundError):
        PostgresSessionStore(postgres_dsn, mode="read")
    store = open_store(postgres_dsn)
    assert isinstance(store, PostgresSessionStore)
    session = await store_completed_turn(store)
    await store.close()
    async with PostgresSessionStore(postgres_dsn, mode="read") as reader:
        assert (await reader.read(session.id))[0].events == session.events
        with pytest.raises(StoreError, match="read-only"):
            await reader.load(session.id)
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        connection.execute("INSERT INTO dsh_schema (version) VALUES (%s)", (LAYOUT_VERSION + 1,))
    with pytest.raises(StoreError, match="newer dsh"):
        PostgresSessionStore(postgres_dsn)


async def test_a_retry_of_a_batch_whose_commit_answer_was_lost_writes_nothing_twice(
    postgres_dsn: str,
) -> None:
    async with PostgresSessionStore(postgres_dsn) as store:
        session = await store_completed_turn(store)
        loaded = await store.load(session.id)
        before = (store._tracked[session.id].durable, store._fences[session.id])
        complete_turn(loaded)
        await store.flush(loaded)
        # As if the COMMIT's answer had been lost: the store still thinks the batch queued.
        store._tracked[session.id].durable, store._fences[session.id] = before
        await store.flush(loaded)
        assert _count(postgres_dsn, session.id) == (loaded.seq, loaded.seq)
        complete_turn(loaded)
        await store.flush(loaded)  # and the writer goes on at the right head
    async with PostgresSessionStore(postgres_dsn, mode="read") as reader:
        assert (await reader.read(session.id))[0].events == loaded.events


async def test_without_notify_followers_still_see_every_event_by_polling(
    postgres_dsn: str,
) -> None:
    async with (
        PostgresSessionStore(postgres_dsn, notify=False) as writer,
        PostgresSessionStore(postgres_dsn, mode="read") as reader,
    ):
        session = await store_completed_turn(writer)
        loaded = await writer.load(session.id)
        follower = reader.follow(session.id, from_seq=session.seq, poll_interval=0.05)
        complete_turn(loaded)
        await writer.flush(loaded)
        seen = []
        async with asyncio.timeout(60):
            async for event in follower:
                seen.append(event)
                if len(seen) == loaded.seq - session.seq:
                    break
        await follower.aclose()
    assert seen == list(loaded.events[session.seq :])
