"""The turn harness the loop suites share: an instant model, the ``add`` tool, and
subjects that play a batch of turns on one event loop.

The model replays pre-built chunks the way a non-streaming provider's response
translates (one ``block-end`` per block, ``usage``, ``finish``): with tools offered it
calls ``add`` first, then answers in text once it sees the result. So a turn's cost is
the harness's own: inbox, log, derivation, request building, assembly, tools. Nothing
here imports a peer, so suites built on it run on the dev install alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from dsh_agent import AgentLoop, tool
from dsh_agent import run as owned_run
from dsh_llm import (
    BlockEndChunk,
    FinishChunk,
    GenerateRequest,
    StopFinish,
    StreamChunk,
    TextBlock,
    TokenUsage,
    ToolCallBlock,
    ToolCallsFinish,
    ToolResultMessage,
    UsageChunk,
    create_user_message,
)

SYSTEM = "You add numbers."
QUESTION = "What is 1 + 2?"
ANSWER = "1 + 2 = 3."
TURNS_PER_CALL = 10
"""Turns per timed call, so the event loop's own start-up is spread thin."""

_USAGE = UsageChunk(usage=TokenUsage(input_tokens=12, output_tokens=6))
_TEXT_ANSWER: tuple[StreamChunk, ...] = (
    BlockEndChunk(index=0, block=TextBlock(text=ANSWER)),
    _USAGE,
    FinishChunk(reason=StopFinish()),
)
_TOOL_CALL: tuple[StreamChunk, ...] = (
    BlockEndChunk(
        index=0, block=ToolCallBlock(call_id="call-1", name="add", arguments='{"a":1,"b":2}')
    ),
    _USAGE,
    FinishChunk(reason=ToolCallsFinish()),
)


class InstantModel:
    """A model adapter that answers at once, naming its provider (``bench``) and
    model as a real adapter does."""

    def __init__(self, model: str = "instant") -> None:
        self.provider, self.model = "bench", model

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        wants_tool = request.tools and not isinstance(request.messages[-1], ToolResultMessage)
        for chunk in _TOOL_CALL if wants_tool else _TEXT_ANSWER:
            yield chunk


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


async def play_turn(agent: AgentLoop) -> None:
    """One turn of ``agent``: the question, through ``run()``."""
    await owned_run(agent, create_user_message(content=QUESTION, source={"kind": "user"}))


Turn = Callable[[], Coroutine[Any, Any, None]]
"""Plays one turn."""


def batch(loop: asyncio.AbstractEventLoop, turn: Turn) -> Callable[[], None]:
    """A subject that plays ``TURNS_PER_CALL`` turns on ``loop``."""

    async def turns() -> None:
        for _ in range(TURNS_PER_CALL):
            await turn()

    return lambda: loop.run_until_complete(turns())


def repeated(work: Callable[[], None]) -> Callable[[], None]:
    """``work`` ``TURNS_PER_CALL`` times, as :func:`batch` plays turns: for work
    compared with a batch of turns."""

    def calls() -> None:
        for _ in range(TURNS_PER_CALL):
            work()

    return calls


def per_turn(values: dict[str, float]) -> dict[str, float]:
    """Figures of batches as figures per turn."""
    return {name: value / TURNS_PER_CALL for name, value in values.items()}
