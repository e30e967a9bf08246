"""Compaction suite: what the token meter costs per step, and one compaction pass.

- Pressure check per step: append one step (step/start, user message, assistant
  message, step/end) and measure the next request's tokens, in a session of ~1k and
  ~100k events. The meter folds only the new events, so the figure should be flat;
  a naive meter that re-prices the whole derived history each step is shown beside
  it at ~1k and ~10k events.
- One compaction pass over a 10k-message surface (2,500 tool turns, every tenth tool
  result oversized): pressure found, oversized results pruned, the head summarized
  by a function summarizer (no model time), as a pre-step boundary runs it.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable

from _harness import Case, Options, Target, compare

from dsh_agent.compaction import Compaction, CompactionEngine, HeuristicCounter, TokenMeter
from dsh_agent.compaction._summarize import SummarizationInput
from dsh_llm import create_assistant_message, create_tool_result_message, create_user_message
from dsh_session import RequestHeader, Session
from dsh_session.events import (
    AssistantMessageData,
    CompletedReason,
    RequestConfig,
    RequestHeaderData,
    StepData,
    ToolResultData,
    TurnEndData,
    TurnStartData,
)

SUITE = "compaction"
_SOURCE = {"provider": "p", "model": "m"}
_HEADER = RequestHeader(config=RequestConfig(provider="p", model="m"), system="Be brief.")


class _Steps:
    """Appends plain question/answer steps to one open turn."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.step = 0
        self.user = create_user_message(content="question " * 20, source={"kind": "user"})

    def __call__(self) -> None:
        self.step += 1
        session, step = self.session, self.step
        session.append("step/start", StepData(turn=1, step=step))
        user = create_user_message(content="question " * 20, source={"kind": "user"})
        session.append("user/message", user)
        answer = create_assistant_message(content="answer " * 20, source=_SOURCE)
        data = AssistantMessageData(turn=1, step=step, message=answer)
        session.append("assistant/message", data)
        session.append("step/end", StepData(turn=1, step=step))


def _session_of(events: int) -> tuple[Session, _Steps]:
    session = Session.create()
    session.append("turn/start", TurnStartData(turn=1))
    session.append("request/header", RequestHeaderData(header=_HEADER, reason="initial"))
    steps = _Steps(session)
    while session.seq < events:
        steps()
    return session, steps


def _metered(events: int, steps_timed: int) -> tuple[float, float]:
    """Median seconds of (append a step + measure) and of the measure alone."""
    session, steps = _session_of(events)
    meter = TokenMeter(session)
    meter.measure()
    whole, alone = [], []
    for _ in range(steps_timed):
        start = time.perf_counter()
        steps()
        middle = time.perf_counter()
        meter.measure()
        end = time.perf_counter()
        whole.append(end - start)
        alone.append(end - middle)
    return statistics.median(whole), statistics.median(alone)


def _naive(events: int) -> Callable[[], None]:
    session, steps = _session_of(events)
    counter = HeuristicCounter()

    def step() -> None:
        steps()
        sum(counter.count_message(message) for message in session.derive_messages())

    return step


def _tool_session(turns: int) -> Session:
    session = Session.create()
    for turn in range(1, turns + 1):
        session.append("turn/start", TurnStartData(turn=turn))
        session.append("step/start", StepData(turn=turn, step=1))
        session.append(
            "user/message", create_user_message(content=f"task {turn}", source={"kind": "user"})
        )
        if turn == 1:
            session.append("request/header", RequestHeaderData(header=_HEADER, reason="initial"))
        call = {"type": "tool-call", "id": f"c{turn}", "name": "read", "arguments": "{}"}
        ask = create_assistant_message(content=[call], source=_SOURCE)
        session.append("assistant/message", AssistantMessageData(turn=turn, step=1, message=ask))
        size = 10_000 if turn % 10 == 0 else 300
        result = create_tool_result_message(call_id=f"c{turn}", content="r" * size)
        session.append("tool/result", ToolResultData(turn=turn, step=1, message=result))
        session.append("step/end", StepData(turn=turn, step=1))
        session.append("step/start", StepData(turn=turn, step=2))
        done = create_assistant_message(content=f"done {turn}", source=_SOURCE)
        session.append("assistant/message", AssistantMessageData(turn=turn, step=2, message=done))
        session.append("step/end", StepData(turn=turn, step=2))
        session.append("turn/end", TurnEndData(turn=turn, reason=CompletedReason()))
    return session


async def _brief(source: SummarizationInput) -> str:
    return f"Checkpoint of {len(source.messages)} messages."


def _pass_seconds(repeats: int, turns: int, policy: Compaction) -> tuple[float, int, int]:
    """Median seconds of one pass; surface length before and after."""
    samples = []
    before = after = 0
    for _ in range(repeats):
        session = _tool_session(turns)
        meter = TokenMeter(session)
        window = meter.measure().tokens // 2  # the surface is at 200% of the window
        engine = CompactionEngine(session, meter, policy, _brief, window)
        before = len(session.surface)
        start = time.perf_counter()
        asyncio.run(engine.relieve_pressure(None))
        samples.append(time.perf_counter() - start)
        after = len(session.surface)
    return statistics.median(samples), before, after


def run(options: Options) -> list[Case]:
    big = 20_000 if options.quick else 100_000
    timed = 200 if options.quick else 1_000
    small_whole, small_alone = _metered(1_000, timed)
    big_whole, big_alone = _metered(big, timed)
    small, large = "~1k events", f"~{big // 1000}k events"
    naive = compare(
        {"~1k events": _naive(1_000), "~10k events": _naive(10_000)},
        number=5,
        repeats=options.repeats(10),
    )
    turns = 1_000 if options.quick else 2_500
    repeats = options.repeats(5)
    pruning, before, after = _pass_seconds(repeats, turns, Compaction(summarizer=_brief))
    summary_only, _, after_summary = _pass_seconds(
        repeats, turns, Compaction(summarizer=_brief, prune=None)
    )
    flat = (Target(peer=small, max_ratio=1.5, subject=large),)
    return [
        Case(
            suite=SUITE,
            name="pressure check alone (meter.measure() after one appended step)",
            unit="s",
            values={small: small_alone, large: big_alone},
            targets=flat,
            notes=f"median of {timed} consecutive steps",
        ),
        Case(
            suite=SUITE,
            name="one step appended + pressure check",
            unit="s",
            values={small: small_whole, large: big_whole},
            targets=flat,
            notes=f"median of {timed} consecutive steps",
        ),
        Case(
            suite=SUITE,
            name="naive per-step re-estimate of the whole history (for contrast)",
            unit="s",
            values=naive,
        ),
        Case(
            suite=SUITE,
            name=f"one compaction pass over a {before:,}-message surface at 2x the threshold",
            unit="s",
            values={"prune + summarize": pruning, "summarize only (prune=None)": summary_only},
            notes=(
                f"function summarizer; {turns // 10} results pruned; surface {before:,} -> "
                f"{after:,} messages (summary only: -> {after_summary:,})"
            ),
        ),
    ]
