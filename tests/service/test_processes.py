"""Real processes on every durable backend: client processes deliver to a ``dsh worker``
process; the same message three times is logged once; a steer reaches the running
turn's next step; each policy; two clients approve one call; a SIGKILLed worker's
sessions are taken over with nothing lost or applied twice."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import pytest

from dsh_agent import DeliveryRejectedError, connect, reconstruct_requests
from dsh_llm import create_user_message
from dsh_session import Session, open_store, undecided_call_ids
from dsh_session.events import TurnEndEvent, UserMessageEvent
from dsh_session.stores import SessionStore

from .conftest import DURABLE, store_url
from .workers import client, receipt, start_worker, stop, worker

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(params=DURABLE)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    backend = str(request.param)
    dsn = request.getfixturevalue("postgres_dsn") if backend == "postgres" else None
    return store_url(backend, tmp_path, dsn)


async def new_sessions(store: SessionStore, count: int = 1) -> list[str]:
    ids: list[str] = []
    for _ in range(count):
        session = Session.create()
        store.attach(session)
        await store.flush(session)
        store.detach(session)
        ids.append(session.id)
    return ids


def user_messages(session: Session) -> list[UserMessageEvent]:
    return [e for e in session.events if isinstance(e, UserMessageEvent)]


def turn_of(session: Session, seq: int) -> int:
    """The turn the event at ``seq`` belongs to."""
    return sum(1 for e in session.events[:seq] if e.type == "turn/start")


async def wait_running(store: SessionStore, sid: str, timeout: float = 20) -> None:
    """Until the log holds an open turn whose tool runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session, report = await store.read(sid)
        stored = session.events[: session.seq - len(report.appended)]
        if any(e.type == "tool/call" for e in stored) and not isinstance(stored[-1], TurnEndEvent):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the turn did not start its tool in time")


async def test_client_processes_deliver_to_a_worker_process_once(url: str) -> None:
    async with open_store(url) as store:
        [sid] = await new_sessions(store)
        message = create_user_message("hello from a browser")
        for cut in (0.2, 0.6):  # the connection drops: the client dies mid-delivery
            dropped = client(url, sid, "followup", message.model_dump_json())
            time.sleep(cut)
            dropped.kill()
            dropped.communicate()
        retries = [client(url, sid, "followup", message.model_dump_json()) for _ in range(3)]
        receipts = [receipt(p) for p in retries]
        assert receipts[0] == receipts[1] == receipts[2]
        assert receipts[0]["delivery_id"] == message.id
        with worker(url, "echo"):
            async with connect(store, sid) as agent:
                await asyncio.wait_for(agent.wait_idle(), 60)
                again = receipt(client(url, sid, "followup", message.model_dump_json()))
                assert again == receipts[0]  # now in the log: still the first receipt
        session, _ = await store.read(sid)
        assert [e.data.id for e in user_messages(session)] == [message.id]
        assert [e.data.message.id for e in session.events if e.type == "assistant/message"]
        reconstruct_requests(session.events)


async def test_steer_reaches_the_running_turns_next_step(url: str) -> None:
    async with open_store(url) as store:
        [sid] = await new_sessions(store)
        async with connect(store, sid) as agent:
            with worker(url, "pausing"):
                await agent.followup(create_user_message("pause please"))
                await wait_running(store, sid)
                steer = create_user_message("also this")
                await agent.steer(steer)
                await asyncio.wait_for(agent.wait_idle(), 60)
        session, _ = await store.read(sid)
        ends = [e for e in session.events if isinstance(e, TurnEndEvent)]
        assert len(ends) == 1 and ends[0].data.reason.kind == "completed"
        [entered] = [e for e in user_messages(session) if e.data.id == steer.id]
        last = [e for e in session.events if e.type == "assistant/message"][-1]
        assert last.data.step == 2 and last.data.turn == 1
        assert "also this" in last.data.message.content[0].text  # type: ignore[union-attr]
        assert entered.seq > next(e.seq for e in session.events if e.type == "tool/result")


@pytest.mark.parametrize("policy", ["enqueue", "steer", "interrupt", "reject"])
async def test_each_policy_while_a_turn_runs(url: str, policy: str) -> None:
    async with open_store(url) as store:
        [sid] = await new_sessions(store)
        async with connect(store, sid) as agent:
            with worker(url, "pausing"):
                await agent.followup(create_user_message("pause please"))
                await wait_running(store, sid)
                late = create_user_message("late input")
                if policy == "reject":
                    with pytest.raises(DeliveryRejectedError) as refused:
                        await agent.followup(late, policy="reject")
                    assert refused.value.session_id == sid
                    assert await agent.mailbox.find(agent.id, late.id) is None
                else:
                    await agent.followup(late, policy=policy)  # type: ignore[arg-type]
                await asyncio.wait_for(agent.wait_idle(), 60)
        session, _ = await store.read(sid)
        ends = [e.data for e in session.events if isinstance(e, TurnEndEvent)]
        entered = {e.data.id: e for e in user_messages(session)}
        if policy == "reject":
            assert late.id not in entered and len(ends) == 1
        elif policy == "steer":
            assert [e.reason.kind for e in ends] == ["completed"]
            assert turn_of(session, entered[late.id].seq) == 1
        elif policy == "enqueue":
            assert [e.reason.kind for e in ends] == ["completed", "completed"]
            assert turn_of(session, entered[late.id].seq) == 2
        else:  # interrupt: the running turn is aborted, then the input runs
            assert [e.reason.kind for e in ends] == ["aborted", "completed"]
            assert turn_of(session, entered[late.id].seq) == 2
        reconstruct_requests(session.events)


async def test_two_client_processes_approve_one_call(url: str) -> None:
    async with open_store(url) as store:
        [sid] = await new_sessions(store)
        async with connect(store, sid) as agent:
            with worker(url, "asks_approval"):
                await agent.followup(create_user_message("look it up"))
                await asyncio.wait_for(agent.wait_idle(), 60)
                session, _ = await store.read(sid)
                [call] = undecided_call_ids(session.events)
                both = [client(url, sid, "approve", call) for _ in range(2)]
                assert receipt(both[0]) == receipt(both[1])
                await asyncio.wait_for(agent.wait_idle(), 60)
        session, _ = await store.read(sid)
        assert [e.type for e in session.events].count("approval/decided") == 1
        assert [e.type for e in session.events].count("tool/result") == 1
        assert session.open_turn is None


async def test_a_killed_workers_sessions_are_taken_over(url: str) -> None:
    async with open_store(url) as store:
        sids = await new_sessions(store, 6)
        sent: dict[str, list[str]] = {sid: [] for sid in sids}
        first = start_worker(url, "pausing", idle_release=5)
        try:
            for sid in sids:
                async with connect(store, sid) as agent:
                    for text in ("pause one", "two", "three"):
                        message = create_user_message(text)
                        await agent.followup(message)
                        sent[sid].append(message.id)
            await wait_running(store, sids[0])
        finally:
            stop(first, kill=True)
        started = time.monotonic()
        with worker(url, "pausing"):
            for sid in sids:
                async with connect(store, sid) as agent:
                    await asyncio.wait_for(agent.wait_idle(), 90)
        took_over_within = time.monotonic() - started
        assert took_over_within < 90
        for sid in sids:
            session, _ = await store.read(sid)
            counts = Counter(e.data.id for e in user_messages(session))
            assert sorted(counts) == sorted(sent[sid]) and set(counts.values()) == {1}
            results = Counter(
                e.data.message.content[0].call_id for e in session.events if e.type == "tool/result"
            )
            assert set(results.values()) <= {1}  # no completed tool ran twice
            reasons = {e.data.reason.kind for e in session.events if isinstance(e, TurnEndEvent)}
            assert reasons <= {"completed", "aborted", "interrupted"}, reasons  # no turn failed
            reconstruct_requests(session.events)
