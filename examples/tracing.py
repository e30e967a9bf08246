"""OpenTelemetry spans of an agent turn, each naming the log entries it covers. Run:
python examples/tracing.py (a scripted model and the SDK's in-memory exporter, so no
key, collector or network is needed; pip install 'dsh-sdk[otel]' opentelemetry-sdk)."""

import asyncio
from collections.abc import Sequence

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from dsh_agent import AgentLoop, run, tool
from dsh_agent.tracing import trace_agent
from dsh_llm import create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


@tool
async def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}."


async def main() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    session = Session.create()
    model = ScriptedAdapter(
        [
            reply(tool_calls=[{"name": "weather", "arguments": {"city": "Oslo"}}]),
            "Sunny in Oslo today.",
        ]
    )
    agent = AgentLoop(
        session=session, adapter=model, provider="test", model="scripted", tools=[weather]
    )
    async with agent:
        with trace_agent(agent, tracer_provider=provider, agent_name="weather-bot"):
            prompt = create_user_message(content="Weather in Oslo?", source={"kind": "user"})
            await run(agent, prompt)

    span_ids: set[str] = set()
    for span in sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0):
        attributes = dict(span.attributes or {})
        ids = attributes.get("dsh.request.message_ids") or attributes.get(
            "dsh.tool_result.message_id"
        )
        if isinstance(ids, str):
            named = [ids]
        else:
            named = [str(i) for i in ids] if isinstance(ids, Sequence) else []
        span_ids.update(named)
        seq = attributes["dsh.event.seq"]
        print(f"{span.name:<24} log seq {seq!s:>2}  ids {len(named)}")
    # Every id on a span names a message of the log (the prompt, the call, its result).
    logged = {message.id for message in session.derive_messages()}
    print("span ids in the log:", span_ids <= logged, len(span_ids))


asyncio.run(main())
