"""Live updates of an agent: what a UI or a test observes as it happens, delivered to
the agent's observers (``agent.subscribe``) and, as the same objects, in its update
stream (:mod:`dsh_agent.streaming`).

They are not durable (the session log holds the durable facts, inbox changes as
``agent/inbox/spliced``) and carry the caller's very message objects, so an observer can
match them with ``is`` or by id.
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
class MessageQueued:
    """``message`` became pending in the inbox (``next-turn`` or ``next-step``), after
    its splice was committed."""

    message: UserMessage

    @property
    def message_id(self) -> MessageId:
        return self.message.id


@dataclass(frozen=True, slots=True)
class MessageDiscarded:
    """The pending ``message`` was removed by a caller or by cancellation; it will not run."""

    message: UserMessage

    @property
    def message_id(self) -> MessageId:
        return self.message.id


@dataclass(frozen=True, slots=True)
class MessageClaimed:
    """Turn ``turn`` took the pending ``message``; it goes to the pre-step waterfall (which
    may still reject it)."""

    message: UserMessage
    turn: int

    @property
    def message_id(self) -> MessageId:
        return self.message.id


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """The agent became ``idle`` or ``running`` (never sent for a non-change)."""

    status: AgentStatus


@dataclass(frozen=True, slots=True)
class AssistantStarted:
    """Step ``step`` of turn ``turn`` is about to stream the model's answer; if it is
    committed, the assistant message has id ``message_id`` (sent before the first
    ``assistant/chunk``, so a UI can key the deltas by that id)."""

    message_id: MessageId
    turn: int
    step: int


LiveUpdate: TypeAlias = (
    MessageQueued | MessageDiscarded | MessageClaimed | StatusUpdate | AssistantStarted
)
"""An update the agent sends its observers as it happens (``agent.subscribe``). Each is
also an :data:`~dsh_agent.AgentUpdate`: an update stream delivers the very same object."""

LiveUpdateObserver: TypeAlias = Callable[[LiveUpdate], None]
"""A synchronous observer of live updates."""


class Notifier:
    """Sends each live update to the observers of one agent, synchronously and in
    order; an observer that raises is logged and does not stop the others. It holds
    the observer list, not the agent (see :mod:`dsh_agent._engine.loop_parts`)."""

    __slots__ = ("_agent_id", "_observers")

    def __init__(self, agent_id: str, observers: list[LiveUpdateObserver]) -> None:
        self._agent_id = agent_id
        self._observers = observers

    def __call__(self, update: LiveUpdate) -> None:
        for observer in tuple(self._observers):
            try:
                observer(update)
            except Exception:
                _log.exception("agent %s: an update observer failed", self._agent_id)


__all__ = [
    "AgentStatus",
    "AssistantStarted",
    "InboxTarget",
    "LiveUpdate",
    "LiveUpdateObserver",
    "MessageClaimed",
    "MessageDiscarded",
    "MessageQueued",
    "Notifier",
    "StatusUpdate",
]
