"""The token meter: how many tokens the next request would use.

The count is anchored on the last provider-reported usage (an ``assistant/message``
with ``usage``: the request it answered plus its own output) and moved by the
estimated price of every surface change since (appends add, a replace subtracts what
it shadows). Without an anchor, or after the request header changed, it is the
estimate of the header and the whole surface. The meter folds each event once, so a
pressure check costs O(events since the last check), never O(conversation).

The estimator is the harness's (token-meter estimate.ts: 4 characters a token, 4 per
block and per role), so shadow prices written here and there agree. An exact counter
can be plugged in through :class:`TokenCounter`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from dsh_llm._content import (
    ContentBlock,
    ContentBlockAdapter,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from dsh_llm._messages import Message
from dsh_llm._stream import TokenUsage
from dsh_session._session import Session
from dsh_session._surface import project
from dsh_session.events import (
    AssistantMessageEvent,
    Replace,
    RequestHeader,
    RequestHeaderEvent,
    SessionEvent,
)

CHARS_PER_TOKEN = 4
BLOCK_OVERHEAD = 4
ROLE_OVERHEAD = 4


class TokenCounter(Protocol):
    """Prices what a request carries. Called once per message and per header."""

    def count_message(self, message: Message) -> int: ...

    def count_header(self, header: RequestHeader) -> int:
        """The system prompt and the tool schemas."""
        ...


def _chars(length: int) -> int:
    return math.ceil(length / CHARS_PER_TOKEN)


def estimate_content(blocks: Sequence[ContentBlock]) -> int:
    """The heuristic price of content blocks (recursive for tool results)."""
    tokens = 0
    for block in blocks:
        if isinstance(block, TextBlock | ReasoningBlock):
            tokens += _chars(len(block.text)) + BLOCK_OVERHEAD
        elif isinstance(block, ToolCallBlock):
            tokens += _chars(len(block.name)) + _chars(len(block.arguments)) + BLOCK_OVERHEAD
        elif isinstance(block, ToolResultBlock):
            tokens += estimate_content(block.content) + BLOCK_OVERHEAD
        else:  # images and blocks a later version adds: their JSON size
            wire = ContentBlockAdapter.dump_json(block, by_alias=True, exclude_none=True)
            tokens += BLOCK_OVERHEAD + _chars(len(wire))
    return tokens


class HeuristicCounter:
    """The default counter: the harness's fixed-density estimate."""

    def count_message(self, message: Message) -> int:
        return estimate_content(message.content) + ROLE_OVERHEAD

    def count_header(self, header: RequestHeader) -> int:
        tokens = 0
        if header.system is not None:
            tokens += _chars(len(header.system)) + ROLE_OVERHEAD
        if header.tools:
            schemas = [tool.model_dump(mode="json", by_alias=True) for tool in header.tools]
            tokens += _chars(len(json.dumps(schemas, separators=(",", ":")))) + BLOCK_OVERHEAD
        return tokens


@dataclass(frozen=True, slots=True)
class Pressure:
    """One measurement: ``tokens`` the next request would use."""

    tokens: int
    surface_tokens: int
    """The estimated price of the surface alone."""
    baseline: Literal["none", "estimated", "usage"]
    """What the count is anchored on: nothing yet, the estimate, or provider usage."""
    log_revision: int
    """How many events were folded (the next unread seq)."""


@dataclass(frozen=True, slots=True)
class _Anchor:
    header: RequestHeader
    surface_tokens: int
    tokens: int
    from_usage: bool


def usage_tokens(usage: TokenUsage) -> int:
    """A request's whole footprint: its prompt (every input bucket) and its output."""
    return (
        usage.input_tokens
        + (usage.cache_read_tokens or 0)
        + (usage.cache_write_tokens or 0)
        + usage.output_tokens
    )


class TokenMeter:
    """Folds one session's log into the pressure of its next request."""

    def __init__(self, session: Session, counter: TokenCounter | None = None) -> None:
        self._session = session
        self.counter: TokenCounter = counter or HeuristicCounter()
        self._consumed = 0
        self._header: RequestHeader | None = None
        self._header_tokens = 0
        self._nodes: list[int] = []  # surface seqs in order, as the meter folded them
        self._positions: dict[int, int] = {}
        self._prices: dict[int, int] = {}
        self._surface_tokens = 0
        self._anchor: _Anchor | None = None

    def measure(self) -> Pressure:
        """The tokens the next request would use (folding only the new events)."""
        self._sync()
        anchor = self._anchor
        if anchor is not None and anchor.header is self._header:
            tokens = anchor.tokens + self._surface_tokens - anchor.surface_tokens
            baseline: Literal["none", "estimated", "usage"] = (
                "usage" if anchor.from_usage else "estimated"
            )
        elif self._header is None and self._surface_tokens == 0:
            tokens, baseline = 0, "none"
        else:
            tokens, baseline = self._header_tokens + self._surface_tokens, "estimated"
        return Pressure(max(0, tokens), self._surface_tokens, baseline, self._consumed)

    def price(self, seq: int) -> int:
        """The estimated price of the surface node held by event ``seq``."""
        self._sync()
        return self._prices[seq]

    def price_message(self, message: Message) -> int:
        return self.counter.count_message(message)

    def price_header(self, header: RequestHeader | None) -> int:
        return 0 if header is None else self.counter.count_header(header)

    def _sync(self) -> None:
        events = self._session.events
        for seq in range(self._consumed, len(events)):
            self._fold(events[seq])
            self._consumed = seq + 1

    def _fold(self, event: SessionEvent) -> None:
        if isinstance(event, RequestHeaderEvent):
            header = event.data.header
            if header != self._header:  # an equal header keeps the anchor valid
                self._header = header
                self._header_tokens = self.counter.count_header(header)
            return
        if event.surface_op is None:
            return
        message = project(event)
        price = 0 if message is None else self.counter.count_message(message)
        if isinstance(event.surface_op, Replace):
            self._replace(event.surface_op, event.seq, price)
        else:
            self._positions[event.seq] = len(self._nodes)
            self._nodes.append(event.seq)
            self._prices[event.seq] = price
            self._surface_tokens += price
        if isinstance(event, AssistantMessageEvent) and self._header is not None:
            self._anchor_on(event.data.usage)

    def _replace(self, op: Replace, seq: int, price: int) -> None:
        nodes, positions = self._nodes, self._positions
        first, last = positions[op.start], positions[op.end]
        for shadowed in nodes[first : last + 1]:
            self._surface_tokens -= self._prices.pop(shadowed)
            del positions[shadowed]
        nodes[first : last + 1] = [seq]  # the meter's own list: no views to keep
        positions[seq] = first
        for position in range(first + 1, len(nodes) if last > first else 0):
            positions[nodes[position]] = position  # moved up by the shadowed span
        self._prices[seq] = price
        self._surface_tokens += price

    def _anchor_on(self, usage: TokenUsage | None) -> None:
        """An answered request: its usage (when no lower than the estimate, which
        keeps the signed deltas conservative) or the estimate is the new anchor."""
        assert self._header is not None
        estimate = self._header_tokens + self._surface_tokens
        reported = None if usage is None else usage_tokens(usage)
        from_usage = reported is not None and reported >= estimate
        self._anchor = _Anchor(
            header=self._header,
            surface_tokens=self._surface_tokens,
            tokens=reported if from_usage and reported is not None else estimate,
            from_usage=from_usage,
        )


__all__ = [
    "BLOCK_OVERHEAD",
    "CHARS_PER_TOKEN",
    "ROLE_OVERHEAD",
    "HeuristicCounter",
    "Pressure",
    "TokenCounter",
    "TokenMeter",
    "estimate_content",
    "usage_tokens",
]
