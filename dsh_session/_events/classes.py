"""One frozen event class per typed event type, and :class:`ForeignEvent` for the
harness types dsh keeps without typing. Each class's ``type`` is a ``Literal``, so a
``LogEvent`` narrows on ``event.type == "..."``; whether it derives from
:class:`~dsh_session._events.envelope.SurfaceEvent` matches the ``surface`` column of
:data:`~dsh_session._events.table.EVENT_TABLE` (a test checks it)."""

from __future__ import annotations

from typing import Literal

from dsh_llm._frozen_json import FrozenJson
from dsh_llm._messages import UserMessage
from dsh_session._events.envelope import PlainEvent, SurfaceEvent
from dsh_session._events.payloads import (
    AssistantChunkData,
    AssistantMessageData,
    EndSeedData,
    InboxSplicedData,
    RequestContextData,
    RequestHeaderData,
    StepData,
    ToolCallData,
    ToolResultData,
    TurnEndData,
    TurnStartData,
)
from dsh_session._events_harness import (
    ApprovalAskedData,
    ApprovalDecidedData,
    ApprovalPolicyData,
    CompactionEndData,
    CompactionPruneData,
    CompactionStartData,
    CompactionSummaryData,
    ForeignEventType,
    LlmRetryData,
    LlmRetryStartedData,
)

__all__ = [
    "ApprovalAskedEvent",
    "ApprovalDecidedEvent",
    "ApprovalPolicyEvent",
    "AssistantChunkEvent",
    "AssistantMessageEvent",
    "CompactionEndEvent",
    "CompactionPruneEvent",
    "CompactionStartEvent",
    "CompactionSummaryEvent",
    "EndSeedEvent",
    "ForeignEvent",
    "InboxSplicedEvent",
    "LlmRetryEvent",
    "LlmRetryStartedEvent",
    "RequestContextEvent",
    "RequestHeaderEvent",
    "StepEndEvent",
    "StepStartEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "TurnEndEvent",
    "TurnStartEvent",
    "UserMessageEvent",
]


class TurnStartEvent(PlainEvent):
    """A turn opened: what caused it (user input, a hook, a parent agent)."""

    type: Literal["turn/start"] = "turn/start"
    data: TurnStartData


class TurnEndEvent(PlainEvent):
    """A turn closed, with the one reason it ended (completed, aborted, error, ...)."""

    type: Literal["turn/end"] = "turn/end"
    data: TurnEndData


class StepStartEvent(PlainEvent):
    """A step of the open turn began: one model request and the tool calls it asks for."""

    type: Literal["step/start"] = "step/start"
    data: StepData


class StepEndEvent(PlainEvent):
    """The open step ended."""

    type: Literal["step/end"] = "step/end"
    data: StepData


class UserMessageEvent(SurfaceEvent):
    """A user message entered the conversation: the message value itself, on the surface."""

    type: Literal["user/message"] = "user/message"
    data: UserMessage


class AssistantChunkEvent(PlainEvent):
    """One streamed piece of the model's answer, before the message is committed."""

    type: Literal["assistant/chunk"] = "assistant/chunk"
    data: AssistantChunkData


class AssistantMessageEvent(SurfaceEvent):
    """The model's committed answer: the assistant message value, on the surface."""

    type: Literal["assistant/message"] = "assistant/message"
    data: AssistantMessageData


class ToolCallEvent(PlainEvent):
    """A tool call is about to run (its body has not started yet)."""

    type: Literal["tool/call"] = "tool/call"
    data: ToolCallData


class ToolResultEvent(SurfaceEvent):
    """A tool call's result: the tool result message value, on the surface."""

    type: Literal["tool/result"] = "tool/result"
    data: ToolResultData


class RequestHeaderEvent(PlainEvent):
    """The header (provider, model, system prompt, tools, settings) the next requests use."""

    type: Literal["request/header"] = "request/header"
    data: RequestHeaderData


class InboxSplicedEvent(PlainEvent):
    """A delivery was inserted into or removed from the durable inbox."""

    type: Literal["agent/inbox/spliced"] = "agent/inbox/spliced"
    data: InboxSplicedData


class RequestContextEvent(PlainEvent):
    """Context the next request carries beside the messages."""

    type: Literal["request/context"] = "request/context"
    data: RequestContextData


class EndSeedEvent(PlainEvent):
    """The marker a resumed session starts from: what came before was loaded, not lived."""

    type: Literal["session/end-seed"] = "session/end-seed"
    data: EndSeedData = EndSeedData()


class CompactionStartEvent(PlainEvent):
    """A compaction pass began."""

    type: Literal["compaction/start"] = "compaction/start"
    data: CompactionStartData


class CompactionSummaryEvent(PlainEvent):
    """A summary replaced a prefix of the surface; the originals stay in the log."""

    type: Literal["compaction/summary"] = "compaction/summary"
    data: CompactionSummaryData


class CompactionPruneEvent(PlainEvent):
    """Oversized tool results were pruned from the surface."""

    type: Literal["compaction/prune"] = "compaction/prune"
    data: CompactionPruneData


class CompactionEndEvent(PlainEvent):
    """A compaction pass ended."""

    type: Literal["compaction/end"] = "compaction/end"
    data: CompactionEndData


class LlmRetryEvent(PlainEvent):
    """A failed model attempt will be tried again after a logged wait."""

    type: Literal["llm/retry"] = "llm/retry"
    data: LlmRetryData


class LlmRetryStartedEvent(PlainEvent):
    """The wait before a retry ended and the next attempt started."""

    type: Literal["llm/retry-started"] = "llm/retry-started"
    data: LlmRetryStartedData


class ApprovalAskedEvent(PlainEvent):
    """A tool call waits for a person's decision before it runs."""

    type: Literal["approval/asked"] = "approval/asked"
    data: ApprovalAskedData


class ApprovalDecidedEvent(PlainEvent):
    """A person approved or denied a waiting tool call."""

    type: Literal["approval/decided"] = "approval/decided"
    data: ApprovalDecidedData


class ApprovalPolicyEvent(PlainEvent):
    """The approval policy in force from here on."""

    type: Literal["approval/policy"] = "approval/policy"
    data: ApprovalPolicyData


class ForeignEvent(PlainEvent):
    """An event of a harness type dsh does not act on (see
    :data:`~dsh_session._events_harness.ForeignEventType`), kept losslessly as frozen
    JSON whether or not it is marked ignorable."""

    type: ForeignEventType
    data: FrozenJson
