"""``@tool`` over plain and async functions: worker threads, docstring descriptions,
``Field`` specs and defaults, typed dependencies and the concurrency-safe flag."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from dsh_agent.tools import Tool, ToolCallOutcome, ToolContext, execute_tool_call, tool
from dsh_llm import TextBlock, ToolCallBlock


@dataclass(frozen=True)
class Deps:
    unit: str


async def run(selected: Tool, arguments: str, deps: object = None) -> str:
    context: ToolContext = ToolContext(
        call_id="call-1",  # type: ignore[arg-type]
        turn=1,
        step=1,
        cancelled=asyncio.Event(),
        deps=deps,
    )
    block = ToolCallBlock(call_id="call-1", name=selected.name, arguments=arguments)
    outcome: ToolCallOutcome = await execute_tool_call({selected.name: selected}, block, context)
    texts = [b.text for b in outcome.content if isinstance(b, TextBlock)]
    return "\n".join(texts)


async def test_a_plain_def_runs_in_a_worker_thread() -> None:
    @tool
    def where(label: str) -> str:
        """Say which thread runs the body."""
        return f"{label}:{threading.get_ident()}"

    label, ident = (await run(where, '{"label": "x"}')).split(":")
    assert label == "x"
    assert int(ident) != threading.get_ident()


async def test_a_plain_def_does_not_block_the_event_loop() -> None:
    release = threading.Event()

    @tool
    def blocking() -> str:
        """Wait for the loop to release it."""
        return "released" if release.wait(timeout=10) else "timed out"

    running = asyncio.ensure_future(run(blocking, "{}"))
    await asyncio.sleep(0)
    for _ in range(100):  # the loop keeps turning while the body blocks its thread
        await asyncio.sleep(0.001)
    release.set()
    assert await running == "released"


def test_docstring_argument_descriptions_go_into_the_schema() -> None:
    @tool
    def forecast(city: str, days: int = 3) -> str:
        """Get the weather forecast.

        Args:
            city: The city, in English.
            days: How many days ahead.
        """
        return ""

    assert forecast.description == "Get the weather forecast."
    properties = forecast.parameters["properties"]
    assert properties["city"]["description"] == "The city, in English."
    assert properties["days"]["description"] == "How many days ahead."
    assert properties["days"]["default"] == 3


def test_a_field_description_wins_over_the_docstring() -> None:
    @tool
    def forecast(city: Annotated[str, Field(description="From Field.")]) -> str:
        """Forecast.

        :param city: From the docstring.
        """
        return ""

    assert forecast.parameters["properties"]["city"]["description"] == "From Field."


async def test_a_field_default_reaches_the_tool_as_its_value() -> None:
    @tool
    async def repeat(
        word: str,
        times: int = Field(2, ge=1, description="How often."),
        sep: Annotated[str, Field(description="Between words.")] = "-",
    ) -> str:
        """Repeat a word."""
        assert isinstance(times, int) and isinstance(sep, str)
        return sep.join([word] * times)

    properties = repeat.parameters["properties"]
    assert properties["times"] == {
        "default": 2,
        "description": "How often.",
        "minimum": 1,
        "title": "Times",
        "type": "integer",
    }
    assert properties["sep"]["default"] == "-"
    assert repeat.parameters["required"] == ("word",)
    assert await run(repeat, '{"word": "a"}') == "a-a"
    assert await run(repeat, '{"word": "a", "times": 3, "sep": "+"}') == "a+a+a"
    refused = await run(repeat, '{"word": "a", "times": 0}')
    assert "'times': Input should be greater than or equal to 1" in refused


async def test_a_field_default_factory_is_called_per_call() -> None:
    @tool
    def collect(items: list[str] = Field(default_factory=list)) -> str:  # noqa: B008
        """Collect items."""
        items.append("x")
        return str(len(items))

    assert await run(collect, "{}") == "1"
    assert await run(collect, "{}") == "1"


async def test_deps_reach_the_tool_through_its_context() -> None:
    @tool
    def temperature(ctx: ToolContext[Deps], city: str) -> str:
        """Temperature of a city."""
        return f"{city}: 21 {ctx.deps.unit}"

    assert set(temperature.parameters["properties"]) == {"city"}
    assert await run(temperature, '{"city": "Paris"}', Deps("°C")) == "Paris: 21 °C"


def test_concurrency_safe_is_a_flag_of_the_tool() -> None:
    @tool(concurrency_safe=True)
    async def lookup(key: str) -> str:
        """Read-only lookup."""
        return key

    @tool
    async def write(key: str) -> str:
        """Write."""
        return key

    assert lookup.concurrency_safe is True
    assert write.concurrency_safe is False
