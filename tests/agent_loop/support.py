"""Helpers for agent-loop tests: messages with readable ids, and a recorder that
merges durable events and live notifications into one comparable timeline."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from dsh_agent import (
    AgentLoop,
    AssistantStarted,
    LiveUpdate,
    MessageClaimed,
    MessageDiscarded,
    MessageQueued,
    StatusUpdate,
)
from dsh_llm import UserMessage, create_user_message, freeze_message
from dsh_session import SessionEvent

Entry: TypeAlias = tuple[Any, ...]
AgentFactory: TypeAlias = Callable[..., AgentLoop]


def prompt(text: str) -> UserMessage:
    """A human prompt with a freshly minted id."""
    return create_user_message(content=text, source={"kind": "user"})


def fixed(message_id: str, text: str) -> UserMessage:
    """A prompt with a known id (import, not creation), so timelines read well."""
    message = freeze_message(
        {
            "id": message_id,
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "user"},
        }
    )
    assert isinstance(message, UserMessage)
    return message


def describe_event(event: SessionEvent) -> Entry:
    """A short, comparable description of a durable event."""
    data = event.data
    match event.type:
        case "turn/start":
            return ("turn/start", data.turn)
        case "turn/end":
            return ("turn/end", data.turn, data.reason.kind)
        case "step/start" | "step/end":
            return (event.type, data.turn, data.step)
        case "user/message":
            return ("user/message", data.id)
        case "assistant/chunk":
            return ("assistant/chunk",)
        case "assistant/message":
            flag = ("interrupted",) if data.interrupted else ()
            return ("assistant/message", data.turn, data.step, *flag)
        case "tool/call":
            return ("tool/call", data.call_id)
        case "tool/result":
            error = data.error.code if data.error else None
            return ("tool/result", data.message.content[0].call_id, error)
        case "request/header":
            return ("request/header", data.reason)
        case "agent/inbox/spliced":
            ids = tuple(message.id for message in data.inserted)
            entry: Entry = ("spliced", data.target, data.start, data.removed_count or 0, ids)
            return (*entry, data.outcome) if data.outcome else entry
        case _:
            return (event.type,)


def describe_notification(notification: LiveUpdate) -> Entry:
    match notification:
        case MessageQueued(message):
            return ("live:inserted", message.id)
        case MessageDiscarded(message):
            return ("live:discarded", message.id)
        case MessageClaimed(message, turn):
            return ("live:claimed", message.id, turn)
        case StatusUpdate(status):
            return ("live:status", status)
    raise AssertionError(notification)


class Recorder:
    """Records one agent's durable events and live notifications in the order they
    happen. Consecutive chunks collapse into ``("assistant/chunk", n)``."""

    def __init__(self, agent: AgentLoop) -> None:
        self.agent = agent
        self.notifications: list[LiveUpdate] = []
        self._entries: list[Entry] = []
        agent.session.subscribe(self._on_event)
        agent.subscribe(self._on_notification)

    def _on_event(self, event: SessionEvent) -> None:
        self._entries.append(describe_event(event))

    def _on_notification(self, notification: LiveUpdate) -> None:
        if isinstance(notification, AssistantStarted):
            return  # the timelines here are about the inbox and status
        self.notifications.append(notification)
        self._entries.append(describe_notification(notification))

    def timeline(self) -> list[Entry]:
        """Everything so far; chunk runs collapsed."""
        result: list[Entry] = []
        for entry in self._entries:
            if entry[0] == "assistant/chunk" and result and result[-1][0] == "assistant/chunk":
                result[-1] = ("assistant/chunk", result[-1][1] + 1)
            elif entry[0] == "assistant/chunk":
                result.append(("assistant/chunk", 1))
            else:
                result.append(entry)
        return result

    def take(self) -> list[Entry]:
        """The timeline so far, then start afresh."""
        result = self.timeline()
        self._entries.clear()
        return result
