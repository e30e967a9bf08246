"""The typed updates of :meth:`AgentLoop.stream`: everything a UI shows, in order.

Each update names what it belongs to: a ``MessageId`` (``message_id``) for anything a
UI draws as a message, and the ``seq`` of the session event it comes from, so that
after a reload the UI can match its elements with the stored log (the committed
assistant message keeps the id its deltas carried; its ``source_event_seqs`` are the
seqs of those deltas). Live-only updates (inbox, status, the start of a stream) carry
no seq: they are not in the log, or are in it as inbox splices. Those five are the
agent's live updates (:data:`~dsh_agent.LiveUpdate`, defined in
``dsh_agent._live_updates``): the stream passes on the very objects the agent sends its
observers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from dsh_agent._live_updates import (
    AssistantStarted,
    MessageClaimed,
    MessageDiscarded,
    MessageQueued,
    StatusUpdate,
)
from dsh_llm._failure import LlmFailure
from dsh_llm._ids import CallId, MessageId
from dsh_llm._messages import AssistantMessage, ToolResultMessage, UserMessage
from dsh_session.events import TurnEndReason


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """``turn/start`` at ``seq``."""

    turn: int
    seq: int


@dataclass(frozen=True, slots=True)
class UserMessageEntered:
    """``message`` entered step ``step`` of ``turn``: it is now in the conversation."""

    message: UserMessage
    turn: int
    step: int
    seq: int

    @property
    def message_id(self) -> MessageId:
        return self.message.id


@dataclass(frozen=True, slots=True)
class TextDelta:
    """More text for block ``index`` of message ``message_id``. When the consumer lags,
    adjacent deltas of one block are merged: ``seq`` is the last chunk event included."""

    message_id: MessageId
    index: int
    text: str
    seq: int


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """More reasoning for block ``index`` of message ``message_id`` (merged like
    :class:`TextDelta`)."""

    message_id: MessageId
    index: int
    text: str
    seq: int


@dataclass(frozen=True, slots=True)
class AssistantCommitted:
    """The assistant ``message`` was committed at ``seq`` (``interrupted`` when a cancel
    cut it short); it replaces what the deltas drew under the same id."""

    message: AssistantMessage
    turn: int
    step: int
    seq: int
    interrupted: bool

    @property
    def message_id(self) -> MessageId:
        return self.message.id


@dataclass(frozen=True, slots=True)
class AssistantFailed:
    """The model call for ``message_id`` ended with ``failure``: no message with that id
    will be committed, so a UI removes or marks what the deltas drew. ``seq`` is the
    failed ``finish`` chunk."""

    message_id: MessageId
    failure: LlmFailure
    seq: int


@dataclass(frozen=True, slots=True)
class ToolCallCommitted:
    """``tool/call`` at ``seq``: call ``call_id`` of assistant message ``message_id``
    is about to run (or be answered as not run)."""

    message_id: MessageId
    call_id: CallId
    name: str
    arguments: str
    turn: int
    step: int
    seq: int


@dataclass(frozen=True, slots=True)
class ToolResultCommitted:
    """``tool/result`` at ``seq``: the result ``message`` of call ``call_id``."""

    message: ToolResultMessage
    call_id: CallId
    is_error: bool
    turn: int
    step: int
    seq: int

    @property
    def message_id(self) -> MessageId:
        return self.message.id


@dataclass(frozen=True, slots=True)
class ApprovalAsked:
    """``approval/asked`` at ``seq``: call ``call_id`` (``tool_name`` with the raw JSON
    ``arguments``) of assistant message ``message_id`` waits for a person's decision
    (``agent.approve`` / ``agent.deny``); ``reason`` is why the policy asked, when it
    said. The turn stays open and the agent goes idle until the call is decided."""

    message_id: MessageId
    call_id: CallId
    tool_name: str
    arguments: str
    reason: str | None
    request_id: str
    """The ``id`` of the ``approval/asked`` event (``PendingApproval.request_id``)."""
    turn: int
    step: int
    seq: int


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """``llm/retry`` at ``seq``: the model attempt of step ``step`` of ``turn`` failed
    with ``failure`` and is tried again after ``delay_ms``. ``retry`` counts from 1 (the
    first retry is the second attempt) up to ``max_retries``, the budget of this
    sequence (``None`` for a harness log's unbudgeted ``always`` mode). The failed
    attempt was announced as :class:`AssistantFailed` just before."""

    turn: int
    step: int
    retry: int
    max_retries: int | None
    delay_ms: float
    failure: LlmFailure
    seq: int


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """``turn/end`` at ``seq`` with ``reason`` (``completed``, ``error``, ``aborted``...)."""

    turn: int
    reason: TurnEndReason
    seq: int

    @property
    def kind(self) -> str:
        """The reason's kind, e.g. ``completed`` or ``error``."""
        return self.reason.kind


AgentUpdate: TypeAlias = (
    MessageQueued
    | MessageDiscarded
    | MessageClaimed
    | StatusUpdate
    | TurnStarted
    | UserMessageEntered
    | AssistantStarted
    | TextDelta
    | ReasoningDelta
    | AssistantCommitted
    | AssistantFailed
    | ToolCallCommitted
    | ToolResultCommitted
    | ApprovalAsked
    | RetryScheduled
    | TurnEnded
)
"""Any update of an agent stream."""

__all__ = [
    "AgentUpdate",
    "ApprovalAsked",
    "AssistantCommitted",
    "AssistantFailed",
    "ReasoningDelta",
    "RetryScheduled",
    "TextDelta",
    "ToolCallCommitted",
    "ToolResultCommitted",
    "TurnEnded",
    "TurnStarted",
    "UserMessageEntered",
]
