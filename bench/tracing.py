"""Tracing suite: what ``trace_agent`` adds to a turn.

The tool turn of the agent suite (a tool call, the tool, a text answer, instant model),
each in a new conversation, played with tracing off and with tracing on into the
OpenTelemetry SDK's in-memory exporter through a simple span processor (every span is
exported as it ends, the most expensive SDK set-up), with and without message content.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from _harness import Case, Options, compare
from _instant import TURNS_PER_CALL, Turn, batch, play_turn
from agent import _dsh_agent
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from dsh_agent.tracing import trace_agent

SUITE = "tracing"


def _traced_turn(provider: TracerProvider | None, *, include_content: bool) -> Turn:
    async def turn() -> None:
        agent = _dsh_agent(with_tool=True)
        if provider is None:
            await play_turn(agent)
            return
        with trace_agent(agent, tracer_provider=provider, include_content=include_content):
            await play_turn(agent)

    return turn


def run(options: Options) -> list[Case]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    loop = asyncio.new_event_loop()
    try:
        subjects = {
            "dsh, tracing off": batch(loop, _traced_turn(None, include_content=False)),
            "dsh, traced": batch(loop, _traced_turn(provider, include_content=False)),
            "dsh, traced with content": batch(loop, _traced_turn(provider, include_content=True)),
        }

        def cleared_after(call: Callable[[], None]) -> Callable[[], None]:
            def play() -> None:
                call()
                exporter.clear()

            return play

        cleared = {name: cleared_after(call) for name, call in subjects.items()}
        values = compare(
            cleared,
            number=5,
            repeats=options.repeats(20),
        )
    finally:
        loop.close()
    per_turn = {name: value / TURNS_PER_CALL for name, value in values.items()}
    return [
        Case(
            suite=SUITE,
            name="tool turn, new conversation: tracing off vs on (in-memory exporter)",
            unit="s",
            values=per_turn,
            notes="4 spans per turn: invoke_agent, 2 × chat, execute_tool",
        )
    ]
