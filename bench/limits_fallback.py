"""Limits and fallback suite: what ``UsageLimits`` and ``FallbackAdapter`` add to a
turn when nothing is refused and nothing fails.

The tool turn of the agent suite (one call of ``add``, then a text answer, instant
model: the shared harness of ``_instant.py``), played by a plain loop, by a loop with
per-turn and per-session ``UsageLimits`` set (every limit, none reached: both checks
run before each request and before the tool call), and by a loop whose adapter is a
``FallbackAdapter`` over the instant model and a second one (the primary serves). In
a new conversation and after 200 turns (the limits fold only the events since their
last check, so their cost must not grow with the conversation). CPU time. Target:
each at most 1.02x the plain loop; and, measured alone (steadier on a shared
machine), the guard's work of one tool turn and the adapter's routing of its requests
each at most 0.02x the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from _harness import CPU_CLOCK, Case, Options, Target, compare
from _instant import InstantModel, Turn, add, batch, per_turn, play_turn, repeated

from dsh_agent import AgentLoop, UsageLimits
from dsh_agent._engine.usage_guard import UsageGuard
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
FALLBACK_ADAPTER = FallbackAdapter([InstantModel("instant"), InstantModel("spare")])
"""Built once and shared by every loop, as a program builds its adapters."""


def _agent(kind: str) -> AgentLoop:
    session = Session.create()
    if kind == FALLBACK:
        return AgentLoop(session=session, adapter=FALLBACK_ADAPTER, tools=[add])
    limits = LIMITS if kind == LIMITED else None
    return AgentLoop(
        session=session,
        adapter=InstantModel(),
        tools=[add],
        usage_limits=limits,
        session_usage_limits=limits,
    )


def _new_conversation(kind: str) -> Turn:
    async def turn() -> None:
        await play_turn(_agent(kind))

    return turn


def _late_in(agent: AgentLoop) -> Turn:
    async def turn() -> None:
        await play_turn(agent)

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


def _routing_alone() -> None:
    """The fallback's work of one tool turn without the turn: route its two requests."""
    FALLBACK_ADAPTER.serving("bench", "instant")
    FALLBACK_ADAPTER.serving("bench", "instant")


def run(options: Options) -> list[Case]:
    kinds = (PLAIN, LIMITED, FALLBACK)
    loop = asyncio.new_event_loop()
    try:
        fresh = compare(
            {kind: batch(loop, _new_conversation(kind)) for kind in kinds},
            number=5,
            repeats=options.repeats(80),
            clock=CPU_CLOCK,
        )
        long = {kind: _agent(kind) for kind in kinds}
        for agent in long.values():
            for _ in range(options.repeats(LONG)):
                loop.run_until_complete(play_turn(agent))
        late = compare(
            {kind: batch(loop, _late_in(agent)) for kind, agent in long.items()},
            number=1,
            repeats=options.repeats(60),
            clock=CPU_CLOCK,
        )
        plain = long[PLAIN]
        turn_events = plain.session.seq // plain.session.last_turn
        alone = compare(
            {
                "dsh": batch(loop, _late_in(plain)),
                "UsageLimits checks alone": repeated(_guard_alone(plain, turn_events)),
                "FallbackAdapter routing alone": repeated(_routing_alone),
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
            values=per_turn(fresh),
            targets=targets,
            notes="limits: two checks a step (request, tool calls); fallback: a route lookup",
            clock="cpu",
        ),
        Case(
            suite=SUITE,
            name=f"tool turn after {LONG} turns: plain vs limits vs fallback",
            unit="s",
            values=per_turn(late),
            targets=targets,
            notes="the limits fold only the events since their last check",
            clock="cpu",
        ),
        Case(
            suite=SUITE,
            name="a tool turn vs the UsageLimits and FallbackAdapter work of one, alone",
            unit="s",
            values=per_turn(alone),
            targets=(
                Target(PLAIN, OVERHEAD_TARGET - 1, subject="UsageLimits checks alone"),
                Target(PLAIN, OVERHEAD_TARGET - 1, subject="FallbackAdapter routing alone"),
            ),
            notes="the guard's own cost (fold one turn's events, three checks) and the "
            "adapter's routing of two requests, outside the loop: what the with/without "
            "ratios above would show on a quiet machine",
            clock="cpu",
        ),
    ]
