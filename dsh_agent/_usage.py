"""Usage and cost read from the log: :class:`UsageTotals` (what some events spent),
:class:`UsageLimits` (what a turn or a session may spend) and :class:`ModelPrice`
(what a million tokens cost).

Every figure is folded from the log, never from a counter kept beside it, so the same
events give the same figures in any process, after a crash, and for a session another
writer (or the TypeScript harness) wrote:

- a **request** is one model attempt: each ends with exactly one ``finish`` chunk
  (retries and failed attempts included), or, when cancelled mid-stream, with an
  ``interrupted`` assistant message;
- **tokens** are the ``usage`` of the assistant messages (a failed attempt logs none);
- a **tool call** is a ``tool/call`` event, except the calls a tool-call limit refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from dsh_llm._stream import FinishChunk, TokenUsage
from dsh_session import tool_failure_codes
from dsh_session.events import (
    AssistantChunkEvent,
    AssistantMessageEvent,
    LogEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnStartEvent,
)

_PER_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class UsageLimits:
    """What one run (a turn: see below) or one session may spend; ``None`` is no limit.

    Checked before each model request is sent (``request_limit`` counts the request
    about to go out; a token limit refuses it once the tokens spent reach the limit)
    and before the tool calls of an assistant message run (``tool_calls_limit``
    counts them all). A refusal ends the turn ``error`` with code
    ``USAGE_LIMIT_EXCEEDED`` (:mod:`dsh_llm.failure_codes`), logged, and ``run()``
    raises :class:`~dsh_agent.UsageLimitExceeded`. ``input_tokens_limit`` counts every
    input token, cached or not; ``total_tokens_limit`` input plus output.

    ``AgentLoop(usage_limits=...)`` applies per turn (what one ``run()`` of a prompt
    drives), ``AgentLoop(session_usage_limits=...)`` across the whole session log,
    earlier processes included."""

    request_limit: int | None = None
    input_tokens_limit: int | None = None
    output_tokens_limit: int | None = None
    total_tokens_limit: int | None = None
    tool_calls_limit: int | None = None

    def __post_init__(self) -> None:
        for name in (
            "request_limit",
            "input_tokens_limit",
            "output_tokens_limit",
            "total_tokens_limit",
            "tool_calls_limit",
        ):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 0):
                raise ValueError(f"UsageLimits.{name} must be None or an int >= 0, not {value!r}")

    def refuse_request(self, spent: Spent) -> str | None:
        """Why the next request may not be sent after ``spent``, or None."""
        limit = self.request_limit
        if limit is not None and spent.requests >= limit:
            return f"the request limit {limit} is reached"
        limit = self.input_tokens_limit
        if limit is not None and spent.input_tokens >= limit:
            return f"the input token limit {limit} is reached ({spent.input_tokens} spent)"
        limit = self.output_tokens_limit
        if limit is not None and spent.output_tokens >= limit:
            return f"the output token limit {limit} is reached ({spent.output_tokens} spent)"
        limit = self.total_tokens_limit
        total = spent.input_tokens + spent.output_tokens
        if limit is not None and total >= limit:
            return f"the total token limit {limit} is reached ({total} spent)"
        return None

    def refuse_tool_calls(self, spent: Spent, calls: int) -> str | None:
        """Why ``calls`` more tool calls may not run after ``spent``, or None."""
        limit = self.tool_calls_limit
        if limit is not None and spent.tool_calls + calls > limit:
            return (
                f"the tool call limit {limit} would be exceeded "
                f"({spent.tool_calls} run, {calls} more requested)"
            )
        return None


class Spent(Protocol):
    """What a limit is checked against: :class:`UsageTotals`, or a running tally."""

    @property
    def requests(self) -> int: ...
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def tool_calls(self) -> int: ...


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """What a million tokens of one model cost, in the currency of your choice.
    ``cached_input`` (cache reads) and ``cache_write`` default to ``input``."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input", "cache_write"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and value >= 0):
                raise ValueError(f"ModelPrice.{name} must be a number >= 0, not {value!r}")
            if value is not None and not math.isfinite(value):
                raise ValueError(f"ModelPrice.{name} must be finite, not {value!r}")

    def cost(self, usage: TokenUsage) -> float:
        """The cost of one request's ``usage``."""
        cached = self.input if self.cached_input is None else self.cached_input
        written = self.input if self.cache_write is None else self.cache_write
        return (
            usage.input_tokens * self.input
            + (usage.cache_read_tokens or 0) * cached
            + (usage.cache_write_tokens or 0) * written
            + usage.output_tokens * self.output
        ) / _PER_MILLION


PriceTable = Mapping[str, ModelPrice]
"""Prices keyed ``"provider:model"`` (the assistant message's source), e.g.
``{"deepseek:deepseek-chat": ModelPrice(input=0.27, output=1.10, cached_input=0.07)}``."""


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """What some events spent. ``input_tokens`` counts every input token, the cached
    ones included (``cache_read_tokens`` and ``cache_write_tokens`` say how many of
    them were); ``cost`` is None without a price table or when a request's model has
    no price in it (``unpriced_requests`` counts those)."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    tool_calls: int = 0
    cost: float | None = None
    unpriced_requests: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


class _Counts:
    """The mutable running figures behind one :class:`UsageTotals` (same names)."""

    __slots__ = (
        "cache_read_tokens",
        "cache_write_tokens",
        "cost",
        "input_tokens",
        "output_tokens",
        "requests",
        "tool_calls",
        "unpriced_requests",
    )

    def __init__(self) -> None:
        self.requests = self.input_tokens = self.output_tokens = self.tool_calls = 0
        self.cache_read_tokens = self.cache_write_tokens = self.unpriced_requests = 0
        self.cost = 0.0

    def totals(self, priced: bool) -> UsageTotals:
        return UsageTotals(
            requests=self.requests,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens,
            tool_calls=self.tool_calls,
            cost=self.cost if priced and not self.unpriced_requests else None,
            unpriced_requests=self.unpriced_requests,
        )


class UsageTally:
    """A running fold of events into usage figures, for the session and each turn."""

    def __init__(self, prices: PriceTable | None = None) -> None:
        self._prices = prices
        self._session = _Counts()
        self._turns: dict[int, _Counts] = {}

    @property
    def session(self) -> UsageTotals:
        """What every event folded so far spent."""
        return self._session.totals(self._prices is not None)

    def turn(self, turn: int) -> UsageTotals:
        """What turn ``turn`` spent."""
        counts = self._turns.get(turn)
        return (counts or _Counts()).totals(self._prices is not None)

    @property
    def turns(self) -> dict[int, UsageTotals]:
        return {turn: self.turn(turn) for turn in sorted(self._turns)}

    def running(self, turn: int | None = None) -> Spent:
        """The live figures of ``turn`` (of the session when None), for a check."""
        if turn is None:
            return self._session
        return self._turns.get(turn) or _NOTHING_SPENT

    def _turn_start(self, event: TurnStartEvent) -> None:
        self._turns.setdefault(event.data.turn, _Counts())

    def _tool_call(self, event: ToolCallEvent) -> None:
        self._session.tool_calls += 1
        self._counts(event.data.turn).tool_calls += 1

    def _tool_result(self, event: ToolResultEvent) -> None:
        error = event.data.error
        if error is not None and error.code == tool_failure_codes.TOOL_CALL_LIMIT_EXCEEDED:
            self._session.tool_calls -= 1
            self._counts(event.data.turn).tool_calls -= 1

    def add_all(self, events: Iterable[LogEvent]) -> UsageTally:
        """Fold ``events`` in (dispatched on their class: most events count nothing);
        returns the tally."""
        folds, session = _FOLDS, self._session
        for event in events:
            # event classes are final: identity, not isinstance
            if type(event) is AssistantChunkEvent:  # the most frequent: inline
                data = event.data
                if type(data.chunk) is FinishChunk:
                    session.requests += 1
                    self._counts(data.turn).requests += 1
            elif (fold := folds.get(type(event))) is not None:
                fold(self, event)
        return self

    def _message(self, event: AssistantMessageEvent) -> None:
        data = event.data
        session, turn = self._session, self._counts(data.turn)
        if data.interrupted:
            session.requests += 1
            turn.requests += 1
        usage = data.usage
        if usage is None:
            return
        read, written = usage.cache_read_tokens or 0, usage.cache_write_tokens or 0
        spent_in, spent_out = usage.input_tokens + read + written, usage.output_tokens
        cost, unpriced = 0.0, 0
        if self._prices is not None:
            source = data.message.source
            price = self._prices.get(f"{source.provider}:{source.model}")
            if price is None:
                unpriced = 1
            else:
                cost = price.cost(usage)
        for counts in (session, turn):
            counts.input_tokens += spent_in
            counts.output_tokens += spent_out
            counts.cache_read_tokens += read
            counts.cache_write_tokens += written
            counts.unpriced_requests += unpriced
            counts.cost += cost

    def _counts(self, turn: int) -> _Counts:
        counts = self._turns.get(turn)
        if counts is None:
            counts = self._turns[turn] = _Counts()
        return counts


_NOTHING_SPENT = _Counts()
_FOLDS: dict[type[LogEvent], Callable[[UsageTally, Any], None]] = {
    TurnStartEvent: UsageTally._turn_start,
    AssistantMessageEvent: UsageTally._message,
    ToolCallEvent: UsageTally._tool_call,
    ToolResultEvent: UsageTally._tool_result,
}
"""What each counted event class does to a tally."""


def usage_of(events: Iterable[LogEvent], *, prices: PriceTable | None = None) -> UsageTotals:
    """What ``events`` spent (a run's, a session's), priced with ``prices`` if given."""
    return UsageTally(prices).add_all(events).session


def usage_by_turn(
    events: Iterable[LogEvent], *, prices: PriceTable | None = None
) -> dict[int, UsageTotals]:
    """What each turn of ``events`` spent, by turn number."""
    return UsageTally(prices).add_all(events).turns


__all__ = [
    "ModelPrice",
    "PriceTable",
    "Spent",
    "UsageLimits",
    "UsageTally",
    "UsageTotals",
    "usage_by_turn",
    "usage_of",
]
