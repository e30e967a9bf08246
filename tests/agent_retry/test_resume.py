"""A process killed while it waits to retry leaves the scheduled retry in its log; a
new loop over the loaded session continues the sequence with the budget left."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from providers.http_stub import StubServer

from dsh_agent import AgentLoop, TurnFailed, run_retry
from dsh_session import InterruptedReason, TurnEndEvent
from dsh_session.stores import SqliteSessionStore

from .crash_child import POLICY
from .support import (
    adapter_for,
    answer,
    assert_log_rebuilds_the_wire_requests,
    retries,
    server_error,
    started,
)

CHILD = Path(__file__).with_name("crash_child.py")
ROOT = Path(__file__).parents[2]


async def _kill_during_second_wait(stub: StubServer, db: Path) -> str:
    """Run the child until its second retry is durable and waiting, then kill it."""
    stub.script(server_error(500), server_error(429, **{"retry-after-ms": "600000"}))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-u",
        str(CHILD),
        str(db),
        f"{stub.url}/v1",
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    assert child.stdout is not None
    try:
        session_id = (await asyncio.wait_for(child.stdout.readline(), 60)).decode().strip()
        while b"retry 2 of 3 in 600000 ms" not in await asyncio.wait_for(
            child.stdout.readline(), 60
        ):
            pass
    finally:
        child.send_signal(signal.SIGKILL)
        await child.wait()
    return session_id


@pytest.mark.parametrize("recovers", [True, False])
async def test_a_killed_backoff_resumes_with_the_remaining_budget(
    stub: StubServer, tmp_path: Path, recovers: bool
) -> None:
    db = tmp_path / "sessions.db"
    session_id = await _kill_during_second_wait(stub, db)
    async with SqliteSessionStore(db) as store:
        session = await store.load(session_id)
        [end] = [e for e in session.events if isinstance(e, TurnEndEvent)]
        assert isinstance(end.data.reason, InterruptedReason)  # closed by crash repair
        assert [(r.retry, r.delay_ms) for r in retries(session.events)] == [(1, 1), (2, 600_000)]
        assert [s.retry for s in started(session.events)] == [1]  # retry 2 never began

        stub.script(server_error(503), answer("made it") if recovers else server_error(503))
        agent = AgentLoop(
            session=session,
            adapter=adapter_for(stub.url),
            provider="openai",
            model="served-model",
            store=store,
            retry=POLICY,
        )
        if recovers:
            result = await run_retry(agent)
            assert result.final_response == "made it"
        else:
            with pytest.raises(TurnFailed):
                await run_retry(agent)
        # Retry 2 is the new turn's first attempt, at once; retry 3 is the last.
        resumed = [r for r in retries(session.events) if r.turn == 2]
        assert [(r.retry, r.max_retries) for r in resumed] == [(1, 1)]
        assert len(stub.requests) == 1 + POLICY.max_retries
        await assert_log_rebuilds_the_wire_requests(agent, stub)
        await agent.aclose()
