"""How long a dead server takes to reach ``TurnFailed`` with the default retry policy:
the whole budget (five retries, 0.5 s doubling, ±10 % jitter) against one attempt with
``retry=None``. One run each (the figure is dominated by the waits, not by dsh)."""

from __future__ import annotations

import asyncio
import socket
import time

from _harness import Case, Options

import dsh_agent
from dsh_agent import AgentLoop, RetryPolicy, TurnFailed
from dsh_llm import create_user_message
from dsh_llm.providers import OpenAIChatAdapter
from dsh_session import Session


def _dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


async def _seconds_to_failure(retry: RetryPolicy | None) -> float:
    agent = AgentLoop(
        session=Session.create(),
        adapter=OpenAIChatAdapter(base_url=_dead_url(), api_key="k"),
        provider="openai",
        model="m",
        retry=retry,
    )
    message = create_user_message(content="anyone there?", source={"kind": "user"})
    start = time.perf_counter()
    try:
        await dsh_agent.run(agent, message)
    except TurnFailed:
        pass
    else:
        raise AssertionError("a dead server answered")
    elapsed = time.perf_counter() - start
    await agent.aclose()
    return elapsed


def run(options: Options) -> list[Case]:
    values = {
        "dsh default policy": asyncio.run(_seconds_to_failure(RetryPolicy())),
        "dsh retry=None": asyncio.run(_seconds_to_failure(None)),
    }
    return [
        Case(
            suite="retry_budget",
            name="dead server to TurnFailed",
            unit="s",
            values=values,
            notes="expected ~15.5 s: 0.5 + 1 + 2 + 4 + 8 s of backoff, jittered",
        )
    ]
