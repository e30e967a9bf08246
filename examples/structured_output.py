"""Structured output and a plain-def tool: run(..., output_type=Model) gives a
validated Pydantic value. Run: python examples/structured_output.py (a scripted model,
so no key or network is needed)."""

import asyncio
from dataclasses import dataclass

from pydantic import BaseModel, Field

from dsh_agent import AgentLoop, ModelSettings, ToolContext, run, tool
from dsh_llm import create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


class Forecast(BaseModel):
    """Tomorrow's weather in one city."""

    city: str
    celsius: float = Field(ge=-90, le=60)


@dataclass(frozen=True)
class Weather:
    """The dependencies the tools need (here, just a table)."""

    table: dict[str, float]


@tool(concurrency_safe=True)  # read-only: may run beside other safe calls
def temperature(ctx: ToolContext[Weather], city: str) -> str:
    """Tomorrow's temperature in a city.

    Args:
        city: The city's English name.
    """
    return f"{ctx.deps.table[city]} °C"  # a plain def runs in a worker thread


async def main() -> None:
    model = ScriptedAdapter(  # what a model would answer, scripted
        [
            reply(tool_calls=[{"name": "temperature", "arguments": {"city": "Paris"}}]),
            reply(
                tool_calls=[
                    {"name": "final_result", "arguments": {"city": "Paris", "celsius": 21.5}}
                ]
            ),
        ]
    )
    agent = AgentLoop(
        session=Session.create(),
        adapter=model,
        provider="test",
        model="scripted",
        tools=[temperature],
        deps=Weather({"Paris": 21.5}),
        model_settings=ModelSettings(temperature=0.2),
    )
    question = create_user_message(content="Weather in Paris tomorrow?", source={"kind": "user"})
    result = await run(agent, question, output_type=Forecast)
    forecast: Forecast = result.output  # validated, typed
    print(forecast.city, forecast.celsius)
    print(temperature.parameters["properties"]["city"]["description"])
    await agent.aclose()


asyncio.run(main())
