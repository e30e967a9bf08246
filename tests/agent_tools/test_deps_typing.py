"""Typed dependencies: ``AgentLoop(deps=...)`` reaches tools as ``ToolContext.deps``,
and mypy checks the loop's ``deps`` against the ``ToolContext[Deps]`` its tools declare.

This file is type-checked with the rest of the suite (``mypy`` in CI, strict, with
``warn_unused_ignores``): each ``type: ignore[arg-type]`` below fails the check if mypy
stops reporting the wrong ``deps`` it marks, so the negative cases cannot pass silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_type

from dsh_agent import AgentLoop, Tool, ToolContext, run, tool
from dsh_llm import create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


@dataclass(frozen=True)
class Weather:
    unit: str


@dataclass(frozen=True)
class Billing:
    account: str


@tool
def temperature(ctx: ToolContext[Weather], city: str) -> str:
    """Temperature of a city."""
    assert_type(ctx.deps, Weather)
    return f"{city}: 21 {ctx.deps.unit}"


@tool
def plain(city: str) -> str:
    """Needs no dependencies."""
    return city


def test_the_decorated_tools_have_their_deps_type() -> None:
    assert_type(temperature, Tool[Weather])
    assert_type(plain, Tool[object])


def loop(tools: list[Tool[Weather]], deps: Weather | None) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter(
            [
                reply(
                    tool_calls=[
                        {"call_id": "c1", "name": "temperature", "arguments": {"city": "Oslo"}}
                    ]
                ),
                "ok",
            ]
        ),
        provider="test",
        model="test-model",
        tools=tools,
        deps=deps,
    )


async def test_deps_given_to_the_loop_reach_the_tool() -> None:
    agent = loop([temperature, plain], Weather("°C"))
    await run(agent, create_user_message(content="weather?", source={"kind": "user"}))
    results = [e for e in agent.session.events if e.type == "tool/result"]
    answer = results[0].data.message.content[0].content[0]
    assert answer.type == "text" and answer.text == "Oslo: 21 °C"
    await agent.aclose()


def mistyped_loops() -> None:
    """Never called: mypy must refuse each of these (see the module docstring)."""
    AgentLoop(  # type: ignore[misc]
        session=Session.create(),
        adapter=ScriptedAdapter([]),
        provider="test",
        model="m",
        tools=[temperature],
        deps=Billing("acme"),
    )
    AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([]),
        provider="test",
        model="m",
        tools=[plain, temperature],  # type: ignore[list-item]
        deps="not weather",
    )
    # A tool that needs no dependencies fits any loop.
    AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([]),
        provider="test",
        model="m",
        tools=[plain],
        deps=Billing("acme"),
    )
