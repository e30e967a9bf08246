"""Structured-output corrections leave the history later requests are built from
(issue 27, item 6): after a run that failed and after one that succeeded after
corrections, the next request holds no reminder and no failed retry, while the log
keeps every correction and every request is still rebuilt from it exactly."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from dsh_agent import AgentLoop, OutputValidationError, reconstruct_requests, run, tool
from dsh_agent._structured_output import OUTPUT_PLUGIN
from dsh_llm import Message, TextBlock, ToolCallBlock, ToolResultBlock
from dsh_llm.testing import Response, ScriptedAdapter, reply
from dsh_session import Session, UserMessageEvent


class City(BaseModel):
    name: str


def final(call_id: str, arguments: dict[str, Any]) -> Response:
    return reply(tool_calls=[{"call_id": call_id, "name": "final_result", "arguments": arguments}])


def _shown(messages: list[Message] | tuple[Message, ...]) -> list[str]:
    """Each message as role and what it holds: text, a call's id, a result's call id."""
    shown = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                shown.append(f"{message.role}:{block.text}")
            elif isinstance(block, ToolCallBlock):
                shown.append(f"call:{block.call_id}")
            elif isinstance(block, ToolResultBlock):
                shown.append(f"result:{block.call_id}{'!' if block.is_error else ''}")
    return shown


CASES: dict[str, tuple[list[Response], City | None, list[str]]] = {
    "failed, text answers": (
        ["Oslo, I think.", "It is Oslo.", "Oslo!"],
        None,
        ["user:Which city?", "assistant:Oslo, I think."],
    ),
    "failed, invalid calls": (
        [final("a", {"town": "Oslo"}), final("b", {"town": "Oslo"}), final("c", {})],
        None,
        ["user:Which city?", "call:a", "result:a!"],
    ),
    "answered after a text answer": (
        ["Oslo, I think.", final("a", {"name": "Oslo"})],
        City(name="Oslo"),
        ["user:Which city?", "call:a", "result:a"],
    ),
    "answered after an invalid call": (
        [final("a", {"town": "Oslo"}), final("b", {"name": "Oslo"})],
        City(name="Oslo"),
        ["user:Which city?", "call:b", "result:b"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_the_next_request_holds_no_correction(case: str) -> None:
    script, output, kept = CASES[case]
    adapter = ScriptedAdapter([*script, "Next."])
    agent = AgentLoop(session=Session.create(), adapter=adapter, provider="test", model="m")

    if output is None:
        with pytest.raises(OutputValidationError):
            await run(agent, "Which city?", output_type=City)
    else:
        assert (await run(agent, "Which city?", output_type=City)).output == output
    await run(agent, "And then?")

    assert len(adapter.requests) == len(script) + 1
    following = adapter.requests[-1]
    assert _shown(following.messages) == [*kept, "user:And then?"]
    sources = [getattr(m.source, "plugin", None) for m in following.messages]
    assert OUTPUT_PLUGIN not in sources
    # the log keeps the corrections, and every request sent is rebuilt from it
    events = agent.session.events
    reminders = [
        e for e in events if isinstance(e, UserMessageEvent) and e.data.source.kind == "plugin"
    ]
    assert len(reminders) == sum(isinstance(answer, str) for answer in script[:-1])
    assert reconstruct_requests(events) == adapter.requests
    await agent.aclose()


async def test_a_run_answered_at_once_keeps_its_history() -> None:
    adapter = ScriptedAdapter([final("a", {"name": "Oslo"}), "Next."])
    agent = AgentLoop(session=Session.create(), adapter=adapter, provider="test", model="m")

    await run(agent, "Which city?", output_type=City)
    await run(agent, "And then?")

    assert _shown(adapter.requests[-1].messages) == [
        "user:Which city?",
        "call:a",
        "result:a",
        "user:And then?",
    ]
    assert reconstruct_requests(agent.session.events) == adapter.requests
    await agent.aclose()


async def test_what_other_tools_did_stays_in_the_history() -> None:
    """A failed attempt that also called another tool stays with its results (the
    tool ran: the model must still see that), and so does everything before it;
    only the corrections after it leave."""

    @tool
    async def look(path: str) -> str:
        """Read a path."""
        return f"contents of {path}"

    both = reply(
        tool_calls=[
            {"call_id": "l1", "name": "look", "arguments": {"path": "a"}},
            {"call_id": "a", "name": "final_result", "arguments": {"town": "Oslo"}},
        ]
    )
    script: list[Response] = [
        "Oslo, I think.",
        both,
        final("b", {"town": "Oslo"}),
        final("c", {"name": "Oslo"}),
        "Next.",
    ]
    adapter = ScriptedAdapter(script)
    agent = AgentLoop(
        session=Session.create(), adapter=adapter, provider="test", model="m", tools=[look]
    )

    result = await run(agent, "Which city?", output_type=City, output_corrections=3)
    await run(agent, "And then?")

    assert result.output == City(name="Oslo")
    assert _shown(adapter.requests[-1].messages) == [
        "user:Which city?",
        "assistant:Oslo, I think.",
        "user:Give your final answer by calling the final_result tool.",
        "call:l1",
        "call:a",
        "result:l1",
        "result:a!",
        "call:c",
        "result:c",
        "user:And then?",
    ]
    assert reconstruct_requests(agent.session.events) == adapter.requests
    await agent.aclose()
