"""GC pressure suite: a loop turn's cost with a large log of other sessions alive.

Every event is a tree of Python objects that the cyclic collector walks in each full
collection, so a process that keeps long sessions pays for them in every turn that
triggers one, even for a brand-new conversation. This suite plays tool turns with an
instant model (the agent suite's) in a fresh conversation each, timing every turn
alone, first in a process holding nothing else, then with sessions totalling 1M
events alive (200k with ``--quick``), then empty again; the two empty phases are
pooled so drift hits both readings alike. The collector stays on throughout, as in a
real program. Targets: the p99 and the median turn with the sessions alive within
1.2x of the empty process's. The slowest turn of each phase is printed too: CPython
runs a full collection only once the objects surviving since the last one reach a
quarter of the long-lived heap, so with a large heap full collections are rare and
land in a single turn that a p99 over the phase can miss.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time

from _harness import Case, Options, Target
from _instant import QUESTION, SYSTEM, InstantModel, add
from session import _session_with

from dsh_agent import AgentLoop
from dsh_agent import run as owned_run
from dsh_llm import create_user_message
from dsh_session import Session

SUITE = "gc_pressure"
EVENTS_PER_SESSION = 10_000


async def _turn() -> None:
    agent = AgentLoop(
        session=Session.create(),
        adapter=InstantModel(),
        provider="bench",
        model="instant",
        system=SYSTEM,
        tools=[add],
    )
    await owned_run(agent, create_user_message(content=QUESTION, source={"kind": "user"}))


def _turn_times(loop: asyncio.AbstractEventLoop, turns: int) -> list[float]:
    """CPU seconds of each of ``turns`` turns, after a short warm-up."""
    for _ in range(20):
        loop.run_until_complete(_turn())
    samples = []
    for _ in range(turns):
        start = time.process_time()
        loop.run_until_complete(_turn())
        samples.append(time.process_time() - start)
    return samples


def _p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100)[98]


def run(options: Options) -> list[Case]:
    events = 200_000 if options.quick else 1_000_000
    turns = 300 if options.quick else 1_500
    loop = asyncio.new_event_loop()
    try:
        gc.collect()
        empty = _turn_times(loop, turns // 2)
        alive = [
            _session_with(EVENTS_PER_SESSION, f"other-{index}")
            for index in range(events // EVENTS_PER_SESSION)
        ]
        loaded = _turn_times(loop, turns)
        held = sum(len(session.events) for session in alive)
        del alive
        gc.collect()
        empty += _turn_times(loop, turns // 2)
    finally:
        loop.close()
    label = f"{held // 1000:,}k events alive"
    values = {
        f"p99, {label}": _p99(loaded),
        "p99, empty process": _p99(empty),
        f"median, {label}": statistics.median(loaded),
        "median, empty process": statistics.median(empty),
        f"max, {label}": max(loaded),
        "max, empty process": max(empty),
    }
    return [
        Case(
            SUITE,
            f"tool turn, new conversation, with {label} in other sessions",
            "s",
            values,
            targets=(
                Target("p99, empty process", 1.2, subject=f"p99, {label}"),
                Target("median, empty process", 1.2, subject=f"median, {label}"),
            ),
            notes=f"per turn, {turns} turns each way; gc on",
            clock="cpu",
        )
    ]
