"""The approval gate in front of the tool runner: the calls it admits run in pools
where they are concurrency-safe, a call waiting for approval stops the step there,
and the approved rest runs (in a pool again) when the step goes on."""

from __future__ import annotations

import asyncio

from dsh_agent import AgentLoop, Tool, reconstruct_requests, tool
from dsh_llm import CallId
from dsh_llm.testing import ScriptedAdapter
from dsh_session import Session, ToolCallEvent, ToolResultEvent

from .support import calls, prompt


class Reader:
    """Safe tools that yield to the loop while they run, so calls in one pool
    interleave (``start:a start:b end:a end:b``) and serial calls do not."""

    def __init__(self) -> None:
        self.runs: list[str] = []

        async def read(name: str) -> str:
            self.runs.append(f"start:{name}")
            for _ in range(3):
                await asyncio.sleep(0)
            self.runs.append(f"end:{name}")
            return f"read {name}"

        @tool(concurrency_safe=True)
        async def look(name: str) -> str:
            """Read freely."""
            return await read(name)

        @tool(concurrency_safe=True, requires_approval=True)
        async def secret(name: str) -> str:
            """Read, once approved."""
            return await read(name)

        self.tools: tuple[Tool, ...] = (look, secret)


def _agent(reader: Reader, adapter: ScriptedAdapter) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="test",
        model="scripted",
        tools=reader.tools,
    )


async def test_admitted_safe_calls_share_a_pool_and_the_step_waits_at_the_undecided_one() -> None:
    reader = Reader()
    step = calls(
        ("c1", "look", {"name": "a"}),
        ("c2", "look", {"name": "b"}),
        ("c3", "secret", {"name": "c"}),
        ("c4", "look", {"name": "d"}),
    )
    adapter = ScriptedAdapter([step, "Done."])
    agent = _agent(reader, adapter)
    agent.followup(prompt("read them"))
    await agent.when_idle()

    assert reader.runs == ["start:a", "start:b", "end:a", "end:b"]  # one pool, then waits
    assert [p.call_id for p in agent.pending_approvals] == ["c3"]
    assert agent.session.open_turn == 1 and len(adapter.requests) == 1

    await agent.approve(CallId("c3"))
    await agent.when_idle()

    assert reader.runs[4:] == ["start:c", "start:d", "end:c", "end:d"]  # the rest, pooled
    events = agent.session.events
    started = [e.data.call_id for e in events if isinstance(e, ToolCallEvent)]
    answered = [e.data.message.source.call_id for e in events if isinstance(e, ToolResultEvent)]
    assert started == answered == ["c1", "c2", "c3", "c4"]  # model order
    assert agent.session.open_turn is None and agent.pending_approvals == ()
    assert reconstruct_requests(events) == adapter.requests
    await agent.aclose()


async def test_a_denied_call_is_answered_and_the_calls_after_it_still_run_in_a_pool() -> None:
    reader = Reader()
    step = calls(
        ("c1", "secret", {"name": "a"}),
        ("c2", "look", {"name": "b"}),
        ("c3", "look", {"name": "c"}),
    )
    agent = _agent(reader, ScriptedAdapter([step, "Done."]))
    agent.followup(prompt("read them"))
    await agent.when_idle()
    assert reader.runs == []  # the first call waits, so nothing after it runs

    await agent.deny(CallId("c1"), "not that one")
    await agent.when_idle()

    assert reader.runs == ["start:b", "start:c", "end:b", "end:c"]
    answered = [
        e.data.message.source.call_id
        for e in agent.session.events
        if isinstance(e, ToolResultEvent)
    ]
    assert answered == ["c1", "c2", "c3"]
    await agent.aclose()
