"""Limits and fallback suite: what ``UsageLimits`` and ``FallbackAdapter`` add to a
turn when nothing is refused and nothing fails.

The tool turn of the agent suite (one call of ``add``, then a text answer, instant
model), played by a plain loop, by a loop with per-turn and per-session
``UsageLimits`` set (every limit, none reached: both checks run before each request
and before the tool call), and by a loop whose adapter is a ``FallbackAdapter`` over
the instant model and a second one (the primary serves). In a new conversation and
after 200 turns (the limits fold only the events since their last check, so their
cost must not grow with the conversation). CPU time. Target: each at most 1.02x the
plain loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from _harness import CPU_CLOCK, Case, Options, Target, compare

from dsh_agent import AgentLoop, UsageLimits, tool
from dsh_agent._engine.usage_guard import UsageGuard
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
from dsh_llm.providers import FallbackAdapter
from dsh_session import Session

SUITE = "limits"
LONG = 200
OVERHEAD_TARGET = 1.02
LIMITS = UsageLimits(
    request_limit=10**9,
    input_tokens_limit=10**12,
    output_tokens_limit=10**12,
    total_tokens_limit=10**12,
    tool_calls_limit=10**9,
)
PLAIN, LIMITED, FALLBACK = "dsh", "dsh + UsageLimits", "dsh + FallbackAdapter"


TURNS_PER_CALL = 10
QUESTION = "What is 1 + 2?"
Turn = Callable[[], Coroutine[Any, Any, None]]

# The agent suite's instant model (bench/agent.py), here without its pydantic-ai peer so
# that this suite runs on the dev install alone.
_USAGE = UsageChunk(usage=TokenUsage(input_tokens=12, output_tokens=6))
_TEXT_ANSWER: tuple[StreamChunk, ...] = (
    BlockEndChunk(index=0, block=TextBlock(text="1 + 2 = 3.")),
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


class NamedInstantModel:
    """Answers at once (calls ``add``, then answers in text) and names its provider
    and model, as a real adapter does."""

    def __init__(self, model: str) -> None:
        self.provider, self.model = "bench", model

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        wants_tool = request.tools and not isinstance(request.messages[-1], ToolResultMessage)
        for chunk in _TOOL_CALL if wants_tool else _TEXT_ANSWER:
            yield chunk


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def _batch(loop: asyncio.AbstractEventLoop, turn: Turn) -> Callable[[], None]:
    """A subject that plays ``TURNS_PER_CALL`` turns on ``loop``."""

    async def turns() -> None:
        for _ in range(TURNS_PER_CALL):
            await turn()

    return lambda: loop.run_until_complete(turns())


def _agent(kind: str) -> AgentLoop:
    session = Session.create()
    if kind == FALLBACK:
        adapter = FallbackAdapter([NamedInstantModel("instant"), NamedInstantModel("spare")])
        return AgentLoop(session=session, adapter=adapter, tools=[add])
    limits = LIMITS if kind == LIMITED else None
    return AgentLoop(
        session=session,
        adapter=NamedInstantModel("instant"),
        tools=[add],
        usage_limits=limits,
        session_usage_limits=limits,
    )


async def _turn(agent: AgentLoop) -> None:
    agent.followup(create_user_message(content=QUESTION, source={"kind": "user"}))
    await agent.when_idle()


def _new_conversation(kind: str) -> Turn:
    async def turn() -> None:
        await _turn(_agent(kind))

    return turn


def _late_in(agent: AgentLoop) -> Turn:
    async def turn() -> None:
        await _turn(agent)

    return turn


def _guard_alone(agent: AgentLoop, turn_events: int) -> Callable[[], None]:
    """The guard's work of one tool turn, without the turn: fold the turn's events
    (``turn_events`` of them, the last of ``agent``'s log) and make its three checks
    (two requests, one tool call batch) against both limits."""
    session = agent.session
    guard = UsageGuard(session, LIMITS, LIMITS)
    guard.refuse_request(session.last_turn)  # the whole log, once

    def checks() -> None:
        guard._seen = session.seq - turn_events  # fold the last turn's events again
        turn = session.last_turn
        guard.refuse_request(turn)
        guard.refuse_tool_calls(turn, 1)
        guard.refuse_request(turn)

    return checks


def run(options: Options) -> list[Case]:
    kinds = (PLAIN, LIMITED, FALLBACK)
    loop = asyncio.new_event_loop()
    try:
        fresh = compare(
            {kind: _batch(loop, _new_conversation(kind)) for kind in kinds},
            number=5,
            repeats=options.repeats(80),
            clock=CPU_CLOCK,
        )
        long = {kind: _agent(kind) for kind in kinds}
        for agent in long.values():
            for _ in range(options.repeats(LONG)):
                loop.run_until_complete(_turn(agent))
        late = compare(
            {kind: _batch(loop, _late_in(agent)) for kind, agent in long.items()},
            number=1,
            repeats=options.repeats(60),
            clock=CPU_CLOCK,
        )
        plain = long[PLAIN]
        per_turn = plain.session.seq // plain.session.last_turn
        alone = compare(
            {
                "dsh": _batch(loop, _late_in(plain)),
                "UsageLimits checks alone": _repeat(_guard_alone(plain, per_turn)),
            },
            number=1,
            repeats=options.repeats(60),
            clock=CPU_CLOCK,
        )
    finally:
        loop.close()
    targets = tuple(
        Target(peer=PLAIN, subject=kind, max_ratio=OVERHEAD_TARGET) for kind in kinds[1:]
    )
    return [
        Case(
            suite=SUITE,
            name="tool turn, new conversation: plain vs limits vs fallback",
            unit="s",
            values={name: value / TURNS_PER_CALL for name, value in fresh.items()},
            targets=targets,
            notes="limits: two checks a step (request, tool calls); fallback: a route lookup",
            clock="cpu",
        ),
        Case(
            suite=SUITE,
            name=f"tool turn after {LONG} turns: plain vs limits vs fallback",
            unit="s",
            values={name: value / TURNS_PER_CALL for name, value in late.items()},
            targets=targets,
            notes="the limits fold only the events since their last check",
            clock="cpu",
        ),
        Case(
            suite=SUITE,
            name="a tool turn vs the UsageLimits work of one tool turn, alone",
            unit="s",
            values={name: value / TURNS_PER_CALL for name, value in alone.items()},
            notes="the guard's own cost (fold one turn's events, three checks), outside "
            "the loop: what the with/without ratios above would show on a quiet machine",
            clock="cpu",
        ),
    ]


def _repeat(work: Callable[[], None]) -> Callable[[], None]:
    """``work`` ``TURNS_PER_CALL`` times, as :func:`_batch` plays turns."""

    def repeated() -> None:
        for _ in range(TURNS_PER_CALL):
            work()

    return repeated
