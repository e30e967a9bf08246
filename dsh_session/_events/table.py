"""The one table of event types: every type dsh knows, its event class, its payload,
whether it is a surface type and whether the harness knows it.

Every set of event types derives from :data:`EVENT_TABLE`: :data:`EVENT_TYPES`,
:data:`SURFACE_TYPES`, :data:`HARNESS_EVENT_TYPES` (the harness's
``KNOWN_SESSION_EVENT_TYPES``) and :data:`EVENT_CLASSES`. What type checkers must see
spelled out cannot derive from a run-time table: the ``Literal`` unions
(:data:`TypedEventType` here, ``ForeignEventType`` in :mod:`dsh_session._events_harness`),
the ``LogEvent`` union of classes, each class's own ``type`` literal and base class, and
the overloads of ``Session.append`` (:mod:`dsh_session._typed_append`).
``tests/session_log/test_event_table.py`` checks each of them against the table.

Adding a type: its payload class and event class, one row here (in the union's order),
then whatever the table test names as missing.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Literal, TypeAlias

from pydantic import BaseModel

from dsh_llm._messages import UserMessage
from dsh_session._events.classes import (
    ApprovalAskedEvent,
    ApprovalDecidedEvent,
    ApprovalPolicyEvent,
    AssistantChunkEvent,
    AssistantMessageEvent,
    CompactionEndEvent,
    CompactionPruneEvent,
    CompactionStartEvent,
    CompactionSummaryEvent,
    EndSeedEvent,
    ForeignEvent,
    InboxSplicedEvent,
    LlmRetryEvent,
    LlmRetryStartedEvent,
    RequestContextEvent,
    RequestHeaderEvent,
    StepEndEvent,
    StepStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)
from dsh_session._events.envelope import SessionEvent
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
    "EVENT_CLASSES",
    "EVENT_TABLE",
    "EVENT_TYPES",
    "HARNESS_EVENT_TYPES",
    "SURFACE_TYPES",
    "EventType",
    "EventTypeRow",
    "TypedEventType",
]


@dataclass(frozen=True, slots=True)
class EventTypeRow:
    """One event type of :data:`EVENT_TABLE`."""

    type: str
    """The wire type string, e.g. ``tool/result``."""
    event_class: builtins.type[SessionEvent]
    """The class its events validate to (``ForeignEvent`` for every untyped type)."""
    payload: builtins.type[BaseModel] | None
    """The class of its ``data``; ``None`` when the data is kept as frozen JSON."""
    surface: bool = False
    """It puts a message on the surface: it carries ``surfaceOp`` (``"append"`` when
    ``Session.append`` is given none) and may carry ``sourceEventSeqs``."""
    harness: bool = True
    """The TypeScript harness knows it (its ``KNOWN_SESSION_EVENT_TYPES``)."""


def _foreign(type: str) -> EventTypeRow:
    return EventTypeRow(type, ForeignEvent, None)


EVENT_TABLE: tuple[EventTypeRow, ...] = (
    # typed by dsh, in the order of the LogEvent union (the JSON Schema's order)
    EventTypeRow("turn/start", TurnStartEvent, TurnStartData),
    EventTypeRow("turn/end", TurnEndEvent, TurnEndData),
    EventTypeRow("step/start", StepStartEvent, StepData),
    EventTypeRow("step/end", StepEndEvent, StepData),
    EventTypeRow("user/message", UserMessageEvent, UserMessage, surface=True),
    EventTypeRow("assistant/chunk", AssistantChunkEvent, AssistantChunkData),
    EventTypeRow("assistant/message", AssistantMessageEvent, AssistantMessageData, surface=True),
    EventTypeRow("tool/call", ToolCallEvent, ToolCallData),
    EventTypeRow("tool/result", ToolResultEvent, ToolResultData, surface=True),
    EventTypeRow("request/header", RequestHeaderEvent, RequestHeaderData),
    EventTypeRow("agent/inbox/spliced", InboxSplicedEvent, InboxSplicedData),
    EventTypeRow("request/context", RequestContextEvent, RequestContextData),
    EventTypeRow("session/end-seed", EndSeedEvent, EndSeedData),
    EventTypeRow("compaction/start", CompactionStartEvent, CompactionStartData),
    EventTypeRow("compaction/summary", CompactionSummaryEvent, CompactionSummaryData),
    EventTypeRow("compaction/prune", CompactionPruneEvent, CompactionPruneData),
    EventTypeRow("compaction/end", CompactionEndEvent, CompactionEndData),
    EventTypeRow("llm/retry", LlmRetryEvent, LlmRetryData),
    EventTypeRow("llm/retry-started", LlmRetryStartedEvent, LlmRetryStartedData),
    EventTypeRow("approval/asked", ApprovalAskedEvent, ApprovalAskedData),
    EventTypeRow("approval/decided", ApprovalDecidedEvent, ApprovalDecidedData),
    EventTypeRow("approval/policy", ApprovalPolicyEvent, ApprovalPolicyData),
    # the harness's other types: kept as frozen JSON, never acted on
    _foreign("agent-preset/selected"),
    _foreign("command/done"),
    _foreign("command/run"),
    _foreign("feedback/record"),
    _foreign("goal/change"),
    _foreign("hook/invoked"),
    _foreign("hook/result"),
    _foreign("permission/preset"),
    _foreign("plan/mode"),
    _foreign("sandbox/mode"),
    _foreign("schedule/change"),
    _foreign("session/title"),
    _foreign("session/title-llm-request"),
    _foreign("subagent/descriptor"),
    _foreign("team/member"),
    _foreign("team/message/delivered"),
    _foreign("team/message/queued"),
    _foreign("team/task"),
    _foreign("todo/write"),
    _foreign("tool-workflow/agent-end"),
    _foreign("tool-workflow/agent-start"),
    _foreign("tool-workflow/run-end"),
    _foreign("tool-workflow/run-start"),
    _foreign("tool/code-dispatch"),
    _foreign("tool/code-dispatch-start"),
    _foreign("web/deepseek-search-llm-request"),
)
"""Every event type this version knows, one row each (no type twice)."""

EVENT_TYPES: frozenset[str] = frozenset(row.type for row in EVENT_TABLE)
"""The event types this version knows (anything else loads only when ignorable)."""
SURFACE_TYPES: frozenset[str] = frozenset(row.type for row in EVENT_TABLE if row.surface)
"""The only event types that carry ``surfaceOp`` (and may carry ``sourceEventSeqs``):
they put a message on the model-visible surface."""
HARNESS_EVENT_TYPES: frozenset[str] = frozenset(row.type for row in EVENT_TABLE if row.harness)
"""The event types the TypeScript harness knows (core/session/src/known-event-types.ts)."""
EVENT_CLASSES: dict[str, type[SessionEvent]] = {row.type: row.event_class for row in EVENT_TABLE}
"""The event class of each known type."""

# Spelled out for type checkers; the table test asserts it lists the typed rows, in order.
TypedEventType: TypeAlias = Literal[
    "turn/start",
    "turn/end",
    "step/start",
    "step/end",
    "user/message",
    "assistant/chunk",
    "assistant/message",
    "tool/call",
    "tool/result",
    "request/header",
    "agent/inbox/spliced",
    "request/context",
    "session/end-seed",
    "compaction/start",
    "compaction/summary",
    "compaction/prune",
    "compaction/end",
    "llm/retry",
    "llm/retry-started",
    "approval/asked",
    "approval/decided",
    "approval/policy",
]
"""The event types whose payloads dsh types."""

EventType: TypeAlias = TypedEventType | ForeignEventType
"""The event types this version knows: the harness's whole vocabulary."""
