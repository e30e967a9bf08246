"""Random interleavings of deliveries, inbox edits and cancellations against a model
that mixes answers and tool calls. Whatever the order, the log stays a valid session,
every request is reconstructable from it, the inbox rebuilt from the log equals the
live one, and every delivered message is accounted for exactly once."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest

from dsh_agent import AgentLoop, ToolContext, reconstruct_requests, tool
from dsh_llm import GenerateRequest, StreamChunk, ToolResultMessage
from dsh_llm.testing import FunctionAdapter, Reply, reply
from dsh_session import Session

from .support import prompt


class ChunkProducingRequests:
    """Wraps an adapter and records each request once it has produced a chunk: the
    requests the log must be able to rebuild (a request cancelled before its first
    chunk left nothing in the log)."""

    def __init__(self, inner: FunctionAdapter) -> None:
        self.inner = inner
        self.requests: list[GenerateRequest] = []

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        recorded = False
        async for chunk in self.inner.stream(request):
            if not recorded:
                self.requests.append(request)
                recorded = True
            yield chunk


@tool
async def work(steps: int, context: ToolContext) -> str:
    """Work for a few event-loop turns, stopping early when cancelled."""
    for _ in range(steps):
        if context.cancelled.is_set():
            return "stopped"
        await asyncio.sleep(0)
    return "worked"


async def soak(seed: int, operations: int) -> None:
    rng = random.Random(seed)

    def model(request: GenerateRequest) -> Reply:
        after_tool = isinstance(request.messages[-1], ToolResultMessage)
        if after_tool or rng.random() < 0.5:
            return reply(text=f"answer {len(request.messages)}")
        return reply(tool_calls=[{"name": "work", "arguments": {"steps": rng.randint(0, 3)}}])

    adapter = ChunkProducingRequests(FunctionAdapter(model, delay=0.0001))
    agent = AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="p",
        model="m",
        tools=[work],
        check_requests=True,
    )
    delivered: list[str] = []
    for _ in range(operations):
        action = rng.choice(["followup", "followup", "steer", "inject", "cancel", "remove"])
        if action == "cancel":
            agent.cancel(keep_inbox=rng.random() < 0.5)
        elif action == "remove" and agent.inbox.next_turn:
            agent.inbox.remove(agent.inbox.next_turn[-1].id)
        elif action in ("followup", "steer", "inject"):
            message = prompt(f"{action} {len(delivered)}")
            delivered.append(message.id)
            getattr(agent, action)(message)
        await asyncio.sleep(rng.choice([0, 0, 0.0002, 0.001]))
    await agent.when_idle()

    events = agent.session.events
    Session.from_log(agent.session.header, events)  # the whole log is a valid session
    assert reconstruct_requests(events) == adapter.requests
    rebuilt = AgentLoop(
        session=Session.from_log(agent.session.header, events),
        adapter=adapter,
        provider="p",
        model="m",
    )
    assert rebuilt.inbox.next_turn == agent.inbox.next_turn
    assert rebuilt.inbox.next_step == agent.inbox.next_step

    entered = [e.data.id for e in events if e.type == "user/message"]
    splices = [e.data for e in events if e.type == "agent/inbox/spliced"]
    removed = sum((s.removed_count or 0 for s in splices), 0)
    pending = [m.id for m in (*agent.inbox.next_turn, *agent.inbox.next_step)]
    assert len(entered) == len(set(entered))  # nothing entered twice
    assert set(entered) | set(pending) <= set(delivered)
    assert removed + len(pending) == len(delivered)  # each one claimed or discarded, or waiting
    assert agent.status == "idle"


@pytest.mark.parametrize("seed", range(12))
async def test_random_interleavings_keep_the_log_consistent(seed: int) -> None:
    await soak(seed, operations=60)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 140))
async def test_random_interleavings_soak(seed: int) -> None:
    await soak(seed, operations=400)
