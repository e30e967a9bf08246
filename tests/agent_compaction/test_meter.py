"""The token meter: the harness's estimate, anchored on provider usage, each message
priced once however often the pressure is checked."""

from __future__ import annotations

from harness_format.fixtures import expected_session

from dsh_agent.compaction import HeuristicCounter, TokenMeter
from dsh_llm import Message, TokenUsage, create_assistant_message, create_user_message
from dsh_session import (
    AssistantMessageData,
    CompactionPruneEvent,
    CompactionSummaryEvent,
    RequestConfig,
    RequestHeader,
    RequestHeaderData,
    Session,
    SessionHeader,
    StepData,
    TurnStartData,
    parse_events,
)
from dsh_session._harness_format import session_header


def harness_session(until: int) -> Session:
    held = expected_session("compaction")
    header = SessionHeader.model_validate(session_header(held["header"]))
    return Session.from_log(header, parse_events(held["events"][:until]))


def test_prices_equal_the_shadow_prices_the_harness_wrote() -> None:
    events = harness_session(100).events
    prune = next(e for e in events if isinstance(e, CompactionPruneEvent))
    summary = next(e for e in events if isinstance(e, CompactionSummaryEvent))

    before_prune = TokenMeter(harness_session(prune.seq))
    assert before_prune.price(35) == prune.data.shadowed_token_count == 1137
    before_summary = TokenMeter(harness_session(summary.seq - 1))
    prices = [before_summary.price(seq) for seq in summary.data.shadowed_seqs]
    assert sum(prices) == summary.data.shadowed_token_count == 305


class CountingCounter(HeuristicCounter):
    """An 'exact' counter that doubles the estimate and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def count_message(self, message: Message) -> int:
        self.calls += 1
        return 2 * super().count_message(message)


def started(system: str = "sys") -> Session:
    session = Session.create()
    session.append("turn/start", TurnStartData(turn=1))
    header = RequestHeader(config=RequestConfig(provider="p", model="m"), system=system)
    session.append("request/header", RequestHeaderData(header=header, reason="initial"))
    return session


def answer(session: Session, step: int, usage: TokenUsage | None) -> None:
    session.append("step/start", StepData(turn=1, step=step))
    user = create_user_message(content="question " * 10, source={"kind": "user"})
    session.append("user/message", user)
    reply = create_assistant_message(content="reply " * 10, source={"provider": "p", "model": "m"})
    session.append(
        "assistant/message", AssistantMessageData(turn=1, step=step, message=reply, usage=usage)
    )
    session.append("step/end", StepData(turn=1, step=step))


def test_the_count_is_anchored_on_usage_and_moved_by_estimates_since() -> None:
    session = started()
    meter = TokenMeter(session)
    empty = meter.measure()
    assert (empty.baseline, empty.tokens) == ("estimated", 5)  # the system prompt
    answer(session, 1, TokenUsage(input_tokens=900, output_tokens=100, cache_read_tokens=40))
    anchored = meter.measure()
    assert (anchored.baseline, anchored.tokens) == ("usage", 1040)
    added = create_user_message(content="more " * 20, source={"kind": "user"})
    session.append("step/start", StepData(turn=1, step=2))
    session.append("user/message", added)
    moved = meter.measure()
    assert moved.tokens == 1040 + HeuristicCounter().count_message(added)
    assert moved.surface_tokens == anchored.surface_tokens + (moved.tokens - 1040)


def test_usage_below_the_estimate_is_not_trusted() -> None:
    session = started()
    meter = TokenMeter(session)
    answer(session, 1, TokenUsage(input_tokens=1, output_tokens=1))
    pressure = meter.measure()
    assert pressure.baseline == "estimated"
    assert pressure.tokens == 5 + pressure.surface_tokens


def test_a_changed_header_drops_the_anchor() -> None:
    session = started()
    meter = TokenMeter(session)
    answer(session, 1, TokenUsage(input_tokens=5000, output_tokens=0))
    assert meter.measure().tokens == 5000
    header = RequestHeader(config=RequestConfig(provider="p", model="m"), system="x" * 400)
    session.append("request/header", RequestHeaderData(header=header, reason="change"))
    pressure = meter.measure()
    assert pressure.baseline == "estimated"
    assert pressure.tokens == 104 + pressure.surface_tokens


def test_each_message_is_priced_once_however_often_pressure_is_checked() -> None:
    session = started()
    counter = CountingCounter()
    meter = TokenMeter(session, counter)
    for step in range(1, 51):
        answer(session, step, None)
        for _ in range(10):
            meter.measure()
    assert counter.calls == 100  # two surface messages a step
    prices = [meter.price(node.seq) for node in session.surface]
    assert prices == [2 * HeuristicCounter().count_message(n.message) for n in session.surface]
    assert meter.measure().surface_tokens == sum(prices)
