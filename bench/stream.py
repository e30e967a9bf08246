"""Stream suite: what ``agent.stream`` costs per turn over ``run``.

The model answers at once, word by word (40 text deltas, as a streaming provider sends
them), in a tool turn (a call, the tool, an answer) in a new conversation. Subjects:
``run()``; ``agent.stream()`` with a consumer that reads every update as it comes
(deltas one per chunk) and with one that reads only at the end (deltas merged); and
the stream encoded to AG-UI SSE lines, as a server would write them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from _harness import CPU_CLOCK, Case, Options, Target, compare

from dsh_agent import AgentLoop, tool
from dsh_agent import run as owned_run
from dsh_agent.streaming import ag_ui_sse
from dsh_llm import (
    BlockEndChunk,
    BlockStartChunk,
    FinishChunk,
    GenerateRequest,
    StopFinish,
    StreamChunk,
    TextBlock,
    TextDeltaChunk,
    TokenUsage,
    ToolCallBlock,
    ToolCallsFinish,
    ToolResultMessage,
    UsageChunk,
    UserMessage,
    create_user_message,
)
from dsh_session import Session

SUITE = "stream"
TURNS_PER_CALL = 10
WORDS = [f"word{i} " for i in range(40)]
_USAGE = UsageChunk(usage=TokenUsage(input_tokens=12, output_tokens=40))
_ANSWER: tuple[StreamChunk, ...] = (
    BlockStartChunk(index=0, block_type="text"),
    *(TextDeltaChunk(index=0, text=word) for word in WORDS),
    BlockEndChunk(index=0, block=TextBlock(text="".join(WORDS))),
    _USAGE,
    FinishChunk(reason=StopFinish()),
)
_CALL: tuple[StreamChunk, ...] = (
    BlockEndChunk(
        index=0, block=ToolCallBlock(call_id="call-1", name="add", arguments='{"a":1,"b":2}')
    ),
    _USAGE,
    FinishChunk(reason=ToolCallsFinish()),
)


class WordByWordModel:
    """Calls ``add`` first, then answers in 40 deltas once it sees the result. Each
    chunk yields to the loop, as chunks from a socket do, so a live consumer runs."""

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        answered = isinstance(request.messages[-1], ToolResultMessage)
        for chunk in _ANSWER if answered else _CALL:
            await asyncio.sleep(0)
            yield chunk


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def _agent() -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=WordByWordModel(),
        provider="bench",
        model="words",
        tools=[add],
    )


def _question() -> UserMessage:
    return create_user_message(content="What is 1 + 2?", source={"kind": "user"})


async def _run_turn() -> None:
    await owned_run(_agent(), _question())


async def _stream_live() -> None:
    async for _update in _agent().stream(_question(), merge_deltas=False):
        pass


async def _stream_at_end() -> None:
    agent = _agent()
    updates = agent.stream(_question())
    await agent.when_idle()
    async for _update in updates:
        pass


async def _stream_ag_ui() -> None:
    agent = _agent()
    message = _question()
    async for _line in ag_ui_sse(agent.stream(message), thread_id=agent.id, run_id=message.id):
        pass


Turn = Callable[[], Coroutine[Any, Any, None]]


def _batch(loop: asyncio.AbstractEventLoop, turn: Turn) -> Callable[[], None]:
    async def turns() -> None:
        for _ in range(TURNS_PER_CALL):
            await turn()

    return lambda: loop.run_until_complete(turns())


def run(options: Options) -> list[Case]:
    loop = asyncio.new_event_loop()
    try:
        values = compare(
            {
                "run": _batch(loop, _run_turn),
                "stream, live consumer": _batch(loop, _stream_live),
                "stream, read at the end": _batch(loop, _stream_at_end),
                "stream to AG-UI SSE": _batch(loop, _stream_ag_ui),
            },
            number=1,
            repeats=options.repeats(20),
            clock=CPU_CLOCK,
        )
    finally:
        loop.close()
    per_turn = {name: value / TURNS_PER_CALL for name, value in values.items()}
    overhead = per_turn["stream, live consumer"] - per_turn["run"]
    return [
        Case(
            SUITE,
            "tool turn with a 40-delta answer, new conversation",
            "s",
            per_turn,
            targets=(Target("run", 1.25, subject="stream, live consumer"),),
            clock="cpu",
            notes=f"per turn; a live stream adds {overhead * 1e6:,.0f} µs over run()",
        )
    ]
