"""Instructions per run and dynamic instructions (issue 27, item 4): both reach the
system prompt of the request the model receives, after the loop's own, and
``reconstruct_requests`` reproduces every request from the log without calling the
dynamic instructions again."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dsh_agent import (
    AgentLoop,
    InstructionsContext,
    TurnFailed,
    reconstruct_requests,
    run,
    tool,
)
from dsh_llm.testing import Response, ScriptedAdapter, reply
from dsh_session import RequestHeaderEvent, Session, TurnStartEvent


@dataclass
class Clock:
    now: str


@tool
async def look(path: str) -> str:
    """Read a path."""
    return f"contents of {path}"


async def test_per_run_instructions_belong_to_the_run_only() -> None:
    adapter = ScriptedAdapter(["Short.", "Long, as usual."])
    agent = AgentLoop(
        session=Session.create(), adapter=adapter, provider="t", model="m", system="Be kind."
    )

    await run(agent, "Hi", instructions="Answer in five words.")
    await run(agent, "Again")

    assert [r.system for r in adapter.requests] == [
        "Be kind.\n\nAnswer in five words.",
        "Be kind.",
    ]
    (first, _) = [e.data for e in agent.session.events if isinstance(e, TurnStartEvent)]
    assert first.run_options is not None
    assert first.run_options.instructions == "Answer in five words."
    assert reconstruct_requests(agent.session.events) == adapter.requests
    await agent.aclose()


@pytest.mark.parametrize("form", ["sync", "async"])
async def test_dynamic_instructions_are_evaluated_per_request_and_logged(form: str) -> None:
    seen: list[tuple[int, int, str]] = []
    clock = Clock("09:00")

    def text(context: InstructionsContext[Clock]) -> str:
        seen.append((context.turn, context.step, context.deps.now))
        assert context.session is agent.session
        return f"It is {context.deps.now}."

    async def async_text(context: InstructionsContext[Clock]) -> str:
        return text(context)

    responses: list[Response] = [
        reply(tool_calls=[{"call_id": "c1", "name": "look", "arguments": {"path": "a"}}]),
        "Read it.",
        "Later.",
    ]
    adapter = ScriptedAdapter(responses)
    agent = AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="t",
        model="m",
        system="Be kind.",
        tools=[look],
        deps=clock,
        instructions=text if form == "sync" else async_text,
    )

    await run(agent, "Read a", instructions="Be brief.")
    clock.now = "17:30"
    await run(agent, "And now?")

    assert seen == [(1, 1, "09:00"), (1, 2, "09:00"), (2, 1, "17:30")]
    assert [r.system for r in adapter.requests] == [
        "Be kind.\n\nIt is 09:00.\n\nBe brief.",
        "Be kind.\n\nIt is 09:00.\n\nBe brief.",
        "Be kind.\n\nIt is 17:30.",
    ]
    headers = [e for e in agent.session.events if isinstance(e, RequestHeaderEvent)]
    assert len(headers) == 2  # logged when the text changed, not before every request
    assert reconstruct_requests(agent.session.events) == adapter.requests
    assert len(seen) == 3  # the reconstruction called nothing
    await agent.aclose()


async def test_dynamic_instructions_that_give_no_text_add_nothing() -> None:
    adapter = ScriptedAdapter(["Fine."])
    agent = AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="t",
        model="m",
        instructions=lambda context: None,
    )

    await run(agent, "Hi")

    assert adapter.requests[0].system is None
    await agent.aclose()


async def test_dynamic_instructions_that_fail_end_the_turn_with_the_error() -> None:
    def broken(context: InstructionsContext[None]) -> str:
        raise RuntimeError("the clock is gone")

    adapter = ScriptedAdapter(["never sent"])
    agent = AgentLoop(
        session=Session.create(), adapter=adapter, provider="t", model="m", instructions=broken
    )

    with pytest.raises(TurnFailed, match="the clock is gone"):
        await run(agent, "Hi")

    assert adapter.requests == []
    assert agent.session.open_turn is None
    await agent.aclose()
