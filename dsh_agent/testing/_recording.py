"""What a replay needs from a recorded log: the requests and responses of its model
attempts, its deliveries, its tool results and its summaries."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from dsh_agent.requests import ModelAttempt, reconstruct_attempts
from dsh_llm._content import ContentBlock, TextBlock
from dsh_llm._messages import ToolResultMessage, UserMessage
from dsh_llm._stream import StreamChunk
from dsh_session.events import (
    AssistantChunkEvent,
    CompactionSummaryEvent,
    InboxSplicedEvent,
    LogEvent,
    ToolCallEvent,
    ToolResultEvent,
)


@dataclass(frozen=True, slots=True)
class Delivery:
    """A message someone gave the agent (it entered the durable inbox)."""

    seq: int
    """The seq of the ``agent/inbox/spliced`` that inserted it."""
    target: str
    """``next-turn`` (``followup``) or ``next-step`` (``steer``/``inject``)."""
    message: UserMessage
    after_attempt: int
    """How many model attempts had started when it was delivered."""


@dataclass(frozen=True, slots=True)
class Recording:
    """A recorded log, read for replay."""

    session_id: str
    attempts: tuple[ModelAttempt, ...]
    responses: tuple[tuple[StreamChunk, ...], ...]
    """The chunks each attempt streamed, in order."""
    deliveries: tuple[Delivery, ...]
    tool_results: dict[str, ToolResultMessage]
    """The recorded result of each tool call, by call id."""
    tool_names: frozenset[str]
    """The tools the recorded model called."""
    summaries: tuple[tuple[ContentBlock, ...], ...]
    """What each summarizing model call returned, in order."""


def read_recording(session_id: str, events: Sequence[LogEvent], until: int | None) -> Recording:
    """Read ``events`` (a whole log); deliveries at or after seq ``until`` are left out."""
    attempts = tuple(reconstruct_attempts(events))
    starts = [attempt.seq for attempt in attempts]
    deliveries = []
    for event in events:
        if isinstance(event, InboxSplicedEvent) and (until is None or event.seq < until):
            started = bisect.bisect_left(starts, event.seq)
            for message in event.data.inserted:
                deliveries.append(Delivery(event.seq, event.data.target, message, started))
    results = {
        str(event.data.message.source.call_id): event.data.message
        for event in events
        if isinstance(event, ToolResultEvent)
    }
    return Recording(
        session_id=session_id,
        attempts=attempts,
        responses=tuple(_responses(events, starts)),
        deliveries=tuple(deliveries),
        tool_results=results,
        tool_names=frozenset(e.data.name for e in events if isinstance(e, ToolCallEvent)),
        summaries=tuple(
            _summary(event) for event in events if isinstance(event, CompactionSummaryEvent)
        ),
    )


def _responses(events: Sequence[LogEvent], starts: list[int]) -> list[tuple[StreamChunk, ...]]:
    """Each attempt's chunks: from its first chunk up to the next attempt or the first
    event the loop wrote after it (splices, which a delivery may write at any moment,
    are passed over)."""
    ends = [*starts[1:], len(events)][: len(starts)]
    responses = []
    for start, end in zip(starts, ends, strict=True):
        chunks: list[StreamChunk] = []
        for event in events[start:end]:
            if isinstance(event, AssistantChunkEvent):
                chunks.append(event.data.chunk)
            elif not isinstance(event, InboxSplicedEvent):
                break
        responses.append(tuple(chunks))
    return responses


def _summary(event: CompactionSummaryEvent) -> tuple[ContentBlock, ...]:
    return tuple(block for block in event.data.summary if isinstance(block, TextBlock))


__all__ = [
    "Delivery",
    "Recording",
    "read_recording",
]
