"""Owned runs: send one followup and collect what happened until the agent is idle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dsh_agent.agent import Agent
from dsh_agent.failures import TurnFailed
from dsh_llm.content import TextBlock
from dsh_llm.messages import UserMessage
from dsh_llm.stream import LlmFailure
from dsh_session.events import AssistantMessageEvent, ErrorReason, SessionEvent, TurnEndEvent


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a run observed. It reports the interval, not causation: another caller's
    input may have run in the same interval."""

    final_response: str | None
    """The text of the last committed assistant message that had text, if any."""
    finish_reason: str | None
    """The ``kind`` of the last turn-end reason (e.g. ``completed``), if a turn ended."""
    events: tuple[SessionEvent, ...]
    """The events from the message's inbox receipt to the next idle."""
    failure: LlmFailure | None = None
    """Why the last turn of the interval failed, when it ended ``error``."""


async def run(agent: Agent, message: UserMessage, *, raise_on_error: bool = True) -> RunResult:
    """Send ``message`` as a followup, wait until ``agent`` is idle, and summarize the
    events logged in between. ``message`` is a created message, not bare text.

    Raises :class:`~dsh_agent.TurnFailed` (carrying the failure and the result) when
    the interval's last turn ended ``error``, unless ``raise_on_error`` is False; a
    ``blocked`` or ``aborted`` turn is an outcome and is returned."""
    if isinstance(message, str):
        raise TypeError(
            f"run() sends a UserMessage, not text: create one with "
            f"create_user_message(content={_preview(message)!r}, source={{'kind': 'user'}})"
        )
    start = agent.session.seq
    agent.followup(message)
    return await _collect(agent, start, raise_on_error)


async def run_retry(agent: Agent, *, raise_on_error: bool = True) -> RunResult:
    """Run the failed last turn again (:meth:`~dsh_agent.AgentLoop.retry`), wait until
    ``agent`` is idle and summarize the interval as :func:`run` does."""
    start = agent.session.seq
    agent.retry()
    return await _collect(agent, start, raise_on_error)


async def _collect(agent: Agent, start: int, raise_on_error: bool) -> RunResult:
    await agent.when_idle()
    events = tuple(agent.session.events[start:])
    end = _last_turn_end(events)
    reason = None if end is None else end.data.reason
    result = RunResult(
        final_response=_final_response(events),
        finish_reason=None if reason is None else reason.kind,
        events=events,
        failure=reason.error if isinstance(reason, ErrorReason) else None,
    )
    if raise_on_error and result.failure is not None:
        raise TurnFailed(result.failure, result)
    return result


def _preview(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _final_response(events: Sequence[SessionEvent]) -> str | None:
    for event in reversed(events):
        if isinstance(event, AssistantMessageEvent):
            texts = [b.text for b in event.data.message.content if isinstance(b, TextBlock)]
            if texts:
                return "".join(texts)
    return None


def _last_turn_end(events: Sequence[SessionEvent]) -> TurnEndEvent | None:
    for event in reversed(events):
        if isinstance(event, TurnEndEvent):
            return event
    return None
