"""The typed updates a remote client reads: the agent's own update vocabulary
(``dsh_agent.streaming``), made from the durable log instead of a live loop.

What is live only (inbox changes, status, the start of a model stream and its deltas,
whose message id the log does not carry before the commit) is not in the log, so a
remote reader sees the committed updates; plus :class:`DeliveryRefused` when the owner
durably refused a mailbox entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from dsh_agent.streaming._updates import (
    AgentUpdate,
    ApprovalAsked,
    AssistantCommitted,
    ToolCallCommitted,
    ToolResultCommitted,
    TurnEnded,
    TurnStarted,
    UserMessageEntered,
)
from dsh_llm._content import ToolCallBlock
from dsh_llm._messages import AssistantMessage
from dsh_session._mailbox._records import DeliveryKind
from dsh_session.events import (
    ApprovalAskedEvent,
    AssistantMessageEvent,
    LogEvent,
    Replace,
    StepStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)


@dataclass(frozen=True, slots=True)
class DeliveryRefused:
    """The session's owner could not apply delivery ``delivery_id`` (``kind``), e.g. an
    approval for a call that does not wait; ``detail`` says why. Durable in the
    mailbox, never dropped."""

    delivery_id: str
    kind: DeliveryKind
    detail: str


RemoteUpdate: TypeAlias = AgentUpdate | DeliveryRefused
"""What :meth:`RemoteAgent.updates` yields."""


class LogTranslator:
    """Turns a session's events, read in order from seq 0, into updates."""

    def __init__(self) -> None:
        self._turn = 0
        self._step = 0
        self._answering: AssistantMessage | None = None

    def translate(self, event: LogEvent) -> AgentUpdate | None:
        if isinstance(event, TurnStartEvent):
            self._turn, self._step = event.data.turn, 0
            return TurnStarted(event.data.turn, event.seq)
        if isinstance(event, StepStartEvent):
            self._step = event.data.step
            return None
        if isinstance(event.surface_op, Replace):
            return None  # compaction rewrites what was shown: no new message
        if isinstance(event, UserMessageEvent):
            return UserMessageEntered(event.data, self._turn, self._step, event.seq)
        if isinstance(event, AssistantMessageEvent):
            data = event.data
            self._answering = data.message
            return AssistantCommitted(
                data.message, data.turn, data.step, event.seq, bool(data.interrupted)
            )
        if isinstance(event, ToolCallEvent) and self._answering is not None:
            call = event.data
            return ToolCallCommitted(
                self._answering.id,
                call.call_id,
                call.name,
                call.arguments,
                call.turn,
                call.step,
                event.seq,
            )
        if isinstance(event, ApprovalAskedEvent):
            return self._approval_asked(event)
        if isinstance(event, ToolResultEvent):
            result = event.data
            block = result.message.content[0]
            return ToolResultCommitted(
                result.message, block.call_id, block.is_error, result.turn, result.step, event.seq
            )
        if isinstance(event, TurnEndEvent):
            return TurnEnded(event.data.turn, event.data.reason, event.seq)
        return None

    def _approval_asked(self, event: ApprovalAskedEvent) -> ApprovalAsked | None:
        """A call of the last assistant message waits for a person's decision."""
        asked, message = event.data, self._answering
        if asked.call_id is None or message is None:  # not about a call of this reader's
            return None
        for block in message.content:
            if isinstance(block, ToolCallBlock) and block.call_id == asked.call_id:
                return ApprovalAsked(
                    message.id,
                    block.call_id,
                    block.name,
                    block.arguments,
                    asked.reason,
                    asked.id,
                    self._turn,
                    self._step,
                    event.seq,
                )
        return None


__all__ = ["DeliveryRefused", "LogTranslator", "RemoteUpdate"]
