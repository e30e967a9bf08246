"""What a log holds: an event of a known type, or an :class:`UnknownEvent` kept because
it is marked ``ignorable: true`` (any other unknown type is refused: silently dropping a
required event would corrupt replay); their unions, and the adapter that validates one
event of any type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, TypeAlias

from pydantic import Field, TypeAdapter, field_validator

from dsh_llm._frozen_json import FrozenJson
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
from dsh_session._events.envelope import PlainEvent, register_dispatch
from dsh_session._events.table import EVENT_TYPES

__all__ = [
    "AnySessionEvent",
    "KnownEvent",
    "KnownEventClasses",
    "LogEvent",
    "SessionEventAdapter",
    "UnknownEvent",
]


class UnknownEvent(PlainEvent):
    """An event of a type this version does not know, kept because it is marked
    ``ignorable: true``; its data is kept as frozen JSON."""

    if TYPE_CHECKING:
        # Any type outside the vocabulary at run time; a placeholder literal for type
        # checkers, so ``event.type == "tool/result"`` narrows a LogEvent to its class.
        type: Literal["(unknown)"]
    else:
        type: str = Field(min_length=1, json_schema_extra={"not": {"enum": [*sorted(EVENT_TYPES)]}})
    data: FrozenJson
    ignorable: Literal[True]

    @field_validator("type")
    @classmethod
    def _type_is_unknown(cls, value: str) -> str:
        if value in EVENT_TYPES:
            raise ValueError(f"{value!r} is a known event type and must match its own shape")
        return value


# Spelled out for type checkers; the table test asserts it lists the table's classes, in
# the table's order (which is the order of the JSON Schema's ``oneOf``).
KnownEventClasses: TypeAlias = (
    TurnStartEvent
    | TurnEndEvent
    | StepStartEvent
    | StepEndEvent
    | UserMessageEvent
    | AssistantChunkEvent
    | AssistantMessageEvent
    | ToolCallEvent
    | ToolResultEvent
    | RequestHeaderEvent
    | InboxSplicedEvent
    | RequestContextEvent
    | EndSeedEvent
    | CompactionStartEvent
    | CompactionSummaryEvent
    | CompactionPruneEvent
    | CompactionEndEvent
    | LlmRetryEvent
    | LlmRetryStartedEvent
    | ApprovalAskedEvent
    | ApprovalDecidedEvent
    | ApprovalPolicyEvent
    | ForeignEvent
)
"""The class of every known type, as a plain union."""

KnownEvent: TypeAlias = Annotated[KnownEventClasses, Field(discriminator="type")]
"""Any event of a known type, tagged on ``type``."""

LogEvent: TypeAlias = KnownEventClasses | UnknownEvent
"""Any event a log holds, as a plain union for type checkers: ``session.events`` items
narrow on ``event.type == "..."`` (or ``match``/``isinstance``) to their class."""

AnySessionEvent: TypeAlias = Annotated[KnownEvent | UnknownEvent, Field(union_mode="left_to_right")]
"""Any event this version can hold: a known type, or an ignorable unknown one."""

SessionEventAdapter: TypeAdapter[AnySessionEvent] = TypeAdapter(AnySessionEvent)
"""Validates (from Python or JSON) and dumps one event of any type."""
register_dispatch(SessionEventAdapter)
