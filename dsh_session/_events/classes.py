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
    type: Literal["turn/start"] = "turn/start"
    data: TurnStartData


class TurnEndEvent(PlainEvent):
    type: Literal["turn/end"] = "turn/end"
    data: TurnEndData


class StepStartEvent(PlainEvent):
    type: Literal["step/start"] = "step/start"
    data: StepData


class StepEndEvent(PlainEvent):
    type: Literal["step/end"] = "step/end"
    data: StepData


class UserMessageEvent(SurfaceEvent):
    type: Literal["user/message"] = "user/message"
    data: UserMessage


class AssistantChunkEvent(PlainEvent):
    type: Literal["assistant/chunk"] = "assistant/chunk"
    data: AssistantChunkData


class AssistantMessageEvent(SurfaceEvent):
    type: Literal["assistant/message"] = "assistant/message"
    data: AssistantMessageData


class ToolCallEvent(PlainEvent):
    type: Literal["tool/call"] = "tool/call"
    data: ToolCallData


class ToolResultEvent(SurfaceEvent):
    type: Literal["tool/result"] = "tool/result"
    data: ToolResultData


class RequestHeaderEvent(PlainEvent):
    type: Literal["request/header"] = "request/header"
    data: RequestHeaderData


class InboxSplicedEvent(PlainEvent):
    type: Literal["agent/inbox/spliced"] = "agent/inbox/spliced"
    data: InboxSplicedData


class RequestContextEvent(PlainEvent):
    type: Literal["request/context"] = "request/context"
    data: RequestContextData


class EndSeedEvent(PlainEvent):
    type: Literal["session/end-seed"] = "session/end-seed"
    data: EndSeedData = EndSeedData()


class CompactionStartEvent(PlainEvent):
    type: Literal["compaction/start"] = "compaction/start"
    data: CompactionStartData


class CompactionSummaryEvent(PlainEvent):
    type: Literal["compaction/summary"] = "compaction/summary"
    data: CompactionSummaryData


class CompactionPruneEvent(PlainEvent):
    type: Literal["compaction/prune"] = "compaction/prune"
    data: CompactionPruneData


class CompactionEndEvent(PlainEvent):
    type: Literal["compaction/end"] = "compaction/end"
    data: CompactionEndData


class LlmRetryEvent(PlainEvent):
    type: Literal["llm/retry"] = "llm/retry"
    data: LlmRetryData


class LlmRetryStartedEvent(PlainEvent):
    type: Literal["llm/retry-started"] = "llm/retry-started"
    data: LlmRetryStartedData


class ApprovalAskedEvent(PlainEvent):
    type: Literal["approval/asked"] = "approval/asked"
    data: ApprovalAskedData


class ApprovalDecidedEvent(PlainEvent):
    type: Literal["approval/decided"] = "approval/decided"
    data: ApprovalDecidedData


class ApprovalPolicyEvent(PlainEvent):
    type: Literal["approval/policy"] = "approval/policy"
    data: ApprovalPolicyData


class ForeignEvent(PlainEvent):
    """An event of a harness type dsh does not act on (see
    :data:`~dsh_session._events_harness.ForeignEventType`), kept losslessly as frozen
    JSON whether or not it is marked ignorable."""

    type: ForeignEventType
    data: FrozenJson
