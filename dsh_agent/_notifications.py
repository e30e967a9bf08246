"""Live notifications of an agent: what a UI or a test observes as it happens.

They are not durable (the session log holds the durable facts) and carry the
caller's very message objects, so an observer can match them with ``is`` or by id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from dsh_llm._ids import MessageId
from dsh_llm._messages import UserMessage

_log = logging.getLogger("dsh_agent")

AgentStatus: TypeAlias = Literal["idle", "running"]
"""``running`` from the moment a turn is being started until the driver is quiescent."""

InboxTarget: TypeAlias = Literal["next-turn", "next-step"]
"""Which pending list a delivery goes to."""


@dataclass(frozen=True, slots=True)
class InboxInserted:
    """``message`` became pending (after its splice was committed)."""

    message: UserMessage


@dataclass(frozen=True, slots=True)
class InboxDiscarded:
    """A pending ``message`` was removed by a caller or by cancellation; it will not run."""

    message: UserMessage


@dataclass(frozen=True, slots=True)
class InboxClaimed:
    """Turn ``turn`` claimed the pending ``message``; it goes to the pre-step waterfall."""

    message: UserMessage
    turn: int


@dataclass(frozen=True, slots=True)
class StatusChanged:
    """The agent's status changed (never sent for a non-change)."""

    status: AgentStatus


@dataclass(frozen=True, slots=True)
class AssistantStreamStarted:
    """Step ``step`` of turn ``turn`` is about to stream the model's answer; if it
    is committed, the assistant message has id ``message_id`` (sent before the
    first ``assistant/chunk``, so a UI can key the deltas by that id)."""

    message_id: MessageId
    turn: int
    step: int


Notification: TypeAlias = (
    InboxInserted | InboxDiscarded | InboxClaimed | StatusChanged | AssistantStreamStarted
)
"""Any live notification."""

NotificationObserver: TypeAlias = Callable[[Notification], None]
"""A synchronous observer of live notifications."""


class Notifier:
    """Sends each notification to the observers of one agent, synchronously and in
    order; an observer that raises is logged and does not stop the others. It holds
    the observer list, not the agent (see :mod:`dsh_agent._engine.loop_parts`)."""

    __slots__ = ("_agent_id", "_observers")

    def __init__(self, agent_id: str, observers: list[NotificationObserver]) -> None:
        self._agent_id = agent_id
        self._observers = observers

    def __call__(self, notification: Notification) -> None:
        for observer in tuple(self._observers):
            try:
                observer(notification)
            except Exception:
                _log.exception("agent %s: a notification observer failed", self._agent_id)
