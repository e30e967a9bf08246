"""The retry sequence as the log records it, so that a loop built over a loaded
session continues where the last one stopped.

A sequence (one ``retryId``) belongs to one step, as in the harness: its
``llm/retry`` events count 1, 2, ... and each carries the sequence's budget
(``maxRetries``). When a process dies, or the turn is cancelled, while a sequence is
waiting or its attempt is running, :func:`retry_target` finds it and says how much
budget remains for the turn that ``agent.retry()`` opens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dsh_agent.errors import NothingToRetryError
from dsh_session._events_harness import LlmRetryData
from dsh_session.events import (
    AbortedReason,
    AssistantChunkEvent,
    AssistantMessageEvent,
    ErrorReason,
    InterruptedReason,
    LlmRetryEvent,
    SessionEvent,
    StepStartEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
)


def prior_retry(
    events: Sequence[SessionEvent], turn: int, step: int, provider: str, policy_key: str
) -> LlmRetryData | None:
    """The latest ``llm/retry`` of the open step ``turn``/``step`` for this provider and
    policy, read back to the step's start only."""
    for event in reversed(events):
        if isinstance(event, LlmRetryEvent):
            data = event.data
            if (data.turn, data.step, data.provider, data.policy_key) == (
                turn,
                step,
                provider,
                policy_key,
            ):
                return data
        elif isinstance(event, StepStartEvent) and (event.data.turn, event.data.step) == (
            turn,
            step,
        ):
            return None
    return None


@dataclass(frozen=True, slots=True)
class RetryTarget:
    """What ``agent.retry()`` runs again: the last turn, and the budget left of a
    sequence it cut short (None: a fresh budget)."""

    turn: int
    remaining: int | None


def retry_target(events: Sequence[SessionEvent]) -> RetryTarget:
    """The last turn, when it can be run again: it ended ``error`` after asking the
    model, ``interrupted`` (the process died in it) or ``aborted`` while a retry
    sequence was in flight. Raises :class:`NothingToRetryError` otherwise."""
    end_index = _last_turn_end(events)
    if end_index is None:
        raise NothingToRetryError("nothing to retry: the session has no finished turn")
    end = events[end_index]
    assert isinstance(end, TurnEndEvent)
    turn, reason = end.data.turn, end.data.reason
    in_flight = _in_flight(events, end_index)
    if isinstance(reason, ErrorReason):
        if not _asked_the_model(events, end_index):
            raise NothingToRetryError(
                f"nothing to retry: the last turn ({turn}) failed before asking the model "
                f"({reason.error.code}: {reason.error.message}); its input never reached the "
                "history, so send it again"
            )
        return RetryTarget(turn, None)
    if isinstance(reason, InterruptedReason | AbortedReason) and in_flight is not None:
        return RetryTarget(turn, _remaining(in_flight))
    if isinstance(reason, InterruptedReason):
        return RetryTarget(turn, None)
    raise NothingToRetryError(
        f"nothing to retry: the last turn ({turn}) ended {reason.kind!r}, not with a failure"
    )


def _last_turn_end(events: Sequence[SessionEvent]) -> int | None:
    for index in range(len(events) - 1, -1, -1):
        if isinstance(events[index], TurnEndEvent):
            return index
    return None


def _asked_the_model(events: Sequence[SessionEvent], end_index: int) -> bool:
    """Whether the turn ending at ``end_index`` made a model attempt (logged a chunk)."""
    for index in range(end_index - 1, -1, -1):
        event = events[index]
        if isinstance(event, AssistantChunkEvent):
            return True
        if isinstance(event, TurnStartEvent):
            return False
    return False


def _in_flight(events: Sequence[SessionEvent], end_index: int) -> LlmRetryData | None:
    """The last ``llm/retry`` of the turn ending at ``end_index`` when no answer came
    after it (its wait or its attempt was cut short)."""
    for index in range(end_index - 1, -1, -1):
        event = events[index]
        if isinstance(event, LlmRetryEvent):
            return event.data
        if isinstance(event, AssistantMessageEvent | ToolResultEvent | TurnStartEvent):
            return None
    return None


def _remaining(data: LlmRetryData) -> int | None:
    """The budget left once the cut-short retry is made (its attempt is the first of
    the next turn); None for a sequence without a budget."""
    if data.max_retries is None:
        return None
    return max(data.max_retries - data.retry, 0)


__all__ = [
    "RetryTarget",
    "prior_retry",
    "retry_target",
]
