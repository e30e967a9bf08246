"""Owned runs: send one followup and collect what happened until the agent is idle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dsh_agent.agent import Agent
from dsh_llm.content import TextBlock
from dsh_llm.messages import UserMessage
from dsh_session.events import AssistantMessageEvent, SessionEvent, TurnEndEvent


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


async def run(agent: Agent, message: UserMessage) -> RunResult:
    """Send ``message`` as a followup, wait until ``agent`` is idle, and summarize the
    events logged in between. ``message`` is a created message, not bare text."""
    if isinstance(message, str):
        raise TypeError(
            f"run() sends a UserMessage, not text: create one with "
            f"create_user_message(content={_preview(message)!r}, source={{'kind': 'user'}})"
        )
    start = agent.session.seq
    agent.followup(message)
    await agent.when_idle()
    events = tuple(agent.session.events[start:])
    return RunResult(
        final_response=_final_response(events),
        finish_reason=_finish_reason(events),
        events=events,
    )


def _preview(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _final_response(events: Sequence[SessionEvent]) -> str | None:
    for event in reversed(events):
        if isinstance(event, AssistantMessageEvent):
            texts = [b.text for b in event.data.message.content if isinstance(b, TextBlock)]
            if texts:
                return "".join(texts)
    return None


def _finish_reason(events: Sequence[SessionEvent]) -> str | None:
    for event in reversed(events):
        if isinstance(event, TurnEndEvent):
            return event.data.reason.kind
    return None
