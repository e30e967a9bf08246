"""The kill soak (``--run-slow``): 200 sessions served by 4 ``dsh worker`` processes, one
of them SIGKILLed at random moments and replaced while clients keep delivering. Every
delivered message must be in its log exactly once, every session must validate and its
requests reconstruct, no completed tool may run twice."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from pathlib import Path

import pytest

from dsh_agent import connect, reconstruct_requests
from dsh_llm import create_user_message
from dsh_session import open_store
from dsh_session._mailbox._open import open_mailbox
from dsh_session.events import ToolResultEvent, TurnEndEvent, UserMessageEvent

from .conftest import store_url
from .test_processes import new_sessions
from .workers import start_worker, stop

SESSIONS = 200
WORKERS = 4
KILLS = 6


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("backend", ["sqlite", "jsonl", "postgres"])
async def test_kill_soak(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    dsn = request.getfixturevalue("postgres_dsn") if backend == "postgres" else None
    url = store_url(backend, tmp_path, dsn)
    chance = random.Random(28)
    async with open_store(url) as store:
        sids = await new_sessions(store, SESSIONS)
        sent: dict[str, list[str]] = {sid: [] for sid in sids}

        async def deliver(text: str) -> None:
            for sid in sids:
                async with connect(store, sid) as agent:
                    message = create_user_message(text)
                    await agent.followup(message)
                    sent[sid].append(message.id)

        await deliver("pause first")
        workers = [start_worker(url, "pausing", idle_release=1.0) for _ in range(WORKERS)]
        try:
            delivering = asyncio.create_task(deliver("second"))
            for _ in range(KILLS):
                await asyncio.sleep(chance.uniform(0.2, 1.5))
                victim = workers.pop(chance.randrange(len(workers)))
                stop(victim, kill=True)
                workers.append(start_worker(url, "pausing", idle_release=1.0))
            await delivering
            mailbox = open_mailbox(store)
            deadline = time.monotonic() + 600
            while await mailbox.waiting():
                assert time.monotonic() < deadline, "the mailboxes did not drain"
                await asyncio.sleep(0.2)
            await mailbox.close()
            for sid in sids:
                async with connect(store, sid) as agent:
                    await asyncio.wait_for(agent.wait_idle(), 120)
        finally:
            for worker in workers:
                stop(worker)
        delivered = entered = 0
        for sid in sids:
            session, _ = await store.read(sid)  # validates the whole log
            counts = Counter(e.data.id for e in session.events if isinstance(e, UserMessageEvent))
            assert sorted(counts) == sorted(sent[sid]) and set(counts.values()) == {1}, sid
            results = Counter(
                e.data.message.content[0].call_id
                for e in session.events
                if isinstance(e, ToolResultEvent)
            )
            assert set(results.values()) <= {1}, sid
            reasons = {e.data.reason.kind for e in session.events if isinstance(e, TurnEndEvent)}
            assert reasons <= {"completed", "aborted", "interrupted"}, (
                sid,
                reasons,
            )  # no turn failed
            reconstruct_requests(session.events)
            delivered += len(sent[sid])
            entered += sum(counts.values())
        print(f"{backend}: {SESSIONS} sessions, {KILLS} kills, {delivered} sent, {entered} logged")
