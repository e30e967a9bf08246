"""store.follow on every backend: the stored events from a seq on, then each event as
another store object commits it, in order, nothing twice; an unknown session is an
error at once; closing the store ends the follower."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dsh_session import SessionEvent, SessionNotFoundError
from dsh_session._header import SessionId
from dsh_session.events import LogEvent

from .conftest import StoreFactory
from .scenarios import complete_turn, store_completed_turn


async def _take(follower: AsyncIterator[SessionEvent], count: int) -> list[SessionEvent]:
    events: list[SessionEvent] = []
    async with asyncio.timeout(60):
        async for event in follower:
            events.append(event)
            if len(events) == count:
                break
    return events


async def test_follow_gives_stored_then_new_events_in_order(open_store: StoreFactory) -> None:
    writer_store = open_store()
    session = await store_completed_turn(writer_store)
    reader = open_store()
    follower = reader.follow(session.id, from_seq=3, poll_interval=0.01)
    first = await _take(follower, session.seq - 3)
    assert first == list(session.events[3:])

    loaded = await writer_store.load(session.id)

    async def write() -> None:
        for _ in range(3):
            complete_turn(loaded)
            await writer_store.flush(loaded)
            await asyncio.sleep(0.01)

    writing = asyncio.create_task(write())
    await writing
    later = await _take(follower, loaded.seq - session.seq)
    assert later == list(loaded.events[session.seq :])
    await follower.aclose()
    await writer_store.close()
    if reader is not writer_store:
        await reader.close()


async def test_following_an_unknown_session_or_a_bad_seq_is_refused(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    with pytest.raises(SessionNotFoundError):
        await anext(store.follow("nobody-here"))
    with pytest.raises(ValueError, match="from_seq"):
        store.follow("nobody-here", from_seq=-1)
    await store.close()


async def test_closing_the_store_ends_its_followers_at_once(open_store: StoreFactory) -> None:
    """A follower waiting for its next poll ends when its store closes, not at the poll."""
    store = open_store()
    session = await store_completed_turn(store)
    follower = store.follow(session.id, from_seq=session.seq, poll_interval=600)
    waiting = asyncio.create_task(_take(follower, 1))
    await asyncio.sleep(0.1)
    await store.close()
    assert await asyncio.wait_for(waiting, timeout=10) == []


async def test_a_flush_through_the_same_store_wakes_its_followers_at_once(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    session = await store_completed_turn(store)
    loaded = await store.load(session.id)
    await store.flush(loaded)  # what the load appended (a resume marker) is stored
    start = loaded.seq
    follower = store.follow(session.id, from_seq=start, poll_interval=600)
    waiting = asyncio.create_task(_take(follower, 1))
    await asyncio.sleep(0.2)  # the follower has read nothing new and waits
    complete_turn(loaded)
    await store.flush(loaded)
    # long before the next poll: the flush itself woke the follower
    assert await asyncio.wait_for(waiting, timeout=30) == [loaded.events[start]]
    await follower.aclose()
    await store.close()


async def test_an_idle_follower_does_not_read_the_log_at_each_poll(
    open_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A follower of a long log that nobody writes looks at the log's version (a file's
    size and time, a row's revision) at each poll and reads the events only when it
    changed, so an idle stream does not cost a read of the whole log per poll."""
    writer_store = open_store()
    session = await store_completed_turn(writer_store)
    reader = open_store()
    if type(reader).__name__ in ("MemorySessionStore", "PostgresSessionStore"):
        pytest.skip("memory is woken by its own commits; PostgreSQL by NOTIFY")
    if reader._log_version(session.id) is None:
        pytest.skip("this layout reads a range of events, as cheap as a version")
    reads = 0
    read_events = reader._read_events

    def counted(session_id: SessionId, from_seq: int) -> list[LogEvent]:
        nonlocal reads
        reads += 1
        return read_events(session_id, from_seq)

    monkeypatch.setattr(reader, "_read_events", counted)
    follower = reader.follow(session.id, from_seq=session.seq, poll_interval=0.005)
    waiting = asyncio.create_task(_take(follower, 1))
    await asyncio.sleep(0.3)  # some 60 polls
    assert reads == 1
    loaded = await writer_store.load(session.id)  # another store object writes
    await writer_store.flush(loaded)
    assert await asyncio.wait_for(waiting, timeout=30) == [loaded.events[session.seq]]
    assert reads <= 3
    await follower.aclose()
    await writer_store.close()
    await reader.close()


async def test_idle_followers_of_a_store_share_one_look_per_poll(
    open_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty followers with nothing new cost one backend call per poll between them
    (the versions of all their logs, read together), not one each: an open stream per
    client must not turn a service's idle time into a core's worth of polling. Each is
    still woken when another store object writes its session."""
    writer = open_store()
    sessions = [await store_completed_turn(writer) for _ in range(20)]
    reader = open_store()
    if type(reader).__name__ in ("MemorySessionStore", "PostgresSessionStore"):
        pytest.skip("memory is woken by its own commits; PostgreSQL by NOTIFY")
    if reader._log_version(sessions[0].id) is None:
        pytest.skip("this layout has no version: each follower reads a range instead")
    calls = 0
    call = reader._call

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return await call(*args, **kwargs)

    monkeypatch.setattr(reader, "_call", counted)
    followers = [reader.follow(s.id, from_seq=s.seq, poll_interval=0.01) for s in sessions]
    waiting = [asyncio.create_task(_take(follower, 1)) for follower in followers]
    await asyncio.sleep(0.5)  # some 50 polls, and 20 first reads
    assert 20 < calls < 120
    for session in sessions[::7]:
        loaded = await writer.load(session.id)
        await writer.flush(loaded)
    done = await asyncio.wait_for(asyncio.gather(*waiting[::7]), timeout=30)
    assert [events[0].seq for events in done] == [s.seq for s in sessions[::7]]
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    for follower in followers:
        await follower.aclose()
    assert not reader._idle_followers._armed  # a stopped follower leaves no wait behind
    assert not any(reader._idle_followers._looking.values())
    await writer.close()
    await reader.close()
