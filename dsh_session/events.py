"""The durable event vocabulary: the envelope and one typed payload per event type.

Every event dumps to the wire shape ``{"type", "seq", "time", "data",
"sourceEventSeqs"?, "surfaceOp"?, "ignorable"?}`` in camelCase. Each known type is its
own frozen :class:`SessionEvent` subclass in a union tagged on ``type``, so a whole log
validates from JSON in one pass. An unknown type is kept as :class:`UnknownEvent` only
when it is marked ``ignorable: true``; any other unknown type is refused (silently
dropping a required event would corrupt replay).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self, TypeAlias, get_args

from pydantic import Discriminator, Field, Tag, TypeAdapter, field_validator

from dsh_llm._frozen_json import JSON_INT_MAX, FrozenJson
from dsh_llm._ids import CallIdField
from dsh_llm._messages import AssistantMessage, ToolResultMessage, UserMessage
from dsh_llm._model import DshModel, OpenDshModel, optional
from dsh_llm._request import ToolSchema
from dsh_llm._stream import LlmFailure, StreamChunk, TokenUsage
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

NonNegativeInt = Annotated[int, Field(ge=0, le=JSON_INT_MAX)]
TurnNumber = Annotated[int, Field(ge=1, le=JSON_INT_MAX)]
"""Turns are numbered from 1, continuing from the last ``turn/start`` in the log."""
StepNumber = Annotated[int, Field(ge=1, le=JSON_INT_MAX)]
"""Steps restart at 1 in each turn."""

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

EVENT_TYPES: frozenset[str] = frozenset(get_args(TypedEventType)) | frozenset(
    get_args(ForeignEventType)
)
SURFACE_TYPES: frozenset[str] = frozenset({"user/message", "assistant/message", "tool/result"})
"""The only event types that carry ``surfaceOp`` (and may carry ``sourceEventSeqs``):
they put a message on the model-visible surface."""


# --- cancel causes and turn-end reasons -------------------------------------------------


class UserCause(DshModel):
    """The user cancelled."""

    kind: Literal["user"] = "user"


class ParentCause(DshModel):
    """The parent agent cancelled this one."""

    kind: Literal["parent"] = "parent"


class HookCause(DshModel):
    """A hook cancelled the turn, saying why."""

    kind: Literal["hook"] = "hook"
    reason: str


class DisposedCause(DshModel):
    """The agent was disposed while the turn ran."""

    kind: Literal["disposed"] = "disposed"


class LegacyCause(DshModel):
    """A turn aborted in a log older than causes; the harness's legacy migration
    writes it for a stored ``{kind: "aborted"}``."""

    kind: Literal["legacy"] = "legacy"


CancelCause: TypeAlias = Annotated[
    UserCause | ParentCause | HookCause | DisposedCause | LegacyCause,
    Field(discriminator="kind"),
]
"""Why a turn was cancelled, tagged on ``kind``; the first cause wins."""


class CompletedReason(DshModel):
    """The model finished and nothing forced another step."""

    kind: Literal["completed"] = "completed"


class AbortedReason(DshModel):
    """The turn was cancelled."""

    kind: Literal["aborted"] = "aborted"
    reason: CancelCause


class BlockedReason(DshModel):
    """A pre-step handler rejected the step."""

    kind: Literal["blocked"] = "blocked"


class ErrorReason(DshModel):
    """The model call or the loop failed."""

    kind: Literal["error"] = "error"
    error: LlmFailure


class MaxTokensReason(DshModel):
    """A step hit the output token limit (sticky for the rest of the turn)."""

    kind: Literal["max-tokens"] = "max-tokens"


class InterruptedReason(DshModel):
    """The process stopped mid-turn; written only by crash repair."""

    kind: Literal["interrupted"] = "interrupted"


TurnEndReason: TypeAlias = Annotated[
    CompletedReason
    | AbortedReason
    | BlockedReason
    | ErrorReason
    | MaxTokensReason
    | InterruptedReason,
    Field(discriminator="kind"),
]
"""Why a turn ended, tagged on ``kind``."""


# --- payloads ---------------------------------------------------------------------------


class TurnStartData(DshModel):
    """``turn/start``: a turn opens."""

    turn: TurnNumber


class TurnEndData(DshModel):
    """``turn/end``: the open turn closes."""

    turn: TurnNumber
    reason: TurnEndReason


class StepData(DshModel):
    """``step/start`` and ``step/end``: one model request and its tool calls."""

    turn: TurnNumber
    step: StepNumber


class AssistantChunkData(DshModel):
    """``assistant/chunk``: one streamed chunk, logged as it arrives."""

    turn: TurnNumber
    step: StepNumber
    chunk: StreamChunk


class AssistantMessageData(DshModel):
    """``assistant/message``: the assembled model output of one attempt."""

    turn: TurnNumber
    step: StepNumber
    message: AssistantMessage
    usage: TokenUsage | None = optional()
    """Token usage of the attempt, when the provider reported it."""
    interrupted: Literal[True] | None = optional()
    """Set when this is the prefix kept from a cancelled stream."""


class ToolCallData(DshModel):
    """``tool/call``: a requested tool call is about to run (its body has not yet)."""

    turn: TurnNumber
    step: StepNumber
    call_id: CallIdField
    name: str
    arguments: str
    """The raw arguments text exactly as the model produced it."""


class ToolErrorInfo(DshModel):
    """Internal identity of a tool failure (not shown to the model)."""

    name: str
    """The error's class name, e.g. ``ToolOutcomeUnknownError``."""
    code: str
    """A stable code, e.g. ``TOOL_FAILED`` or ``TOOL_OUTCOME_UNKNOWN``."""


class ToolResultData(DshModel):
    """``tool/result``: the committed result of one tool call."""

    turn: TurnNumber
    step: StepNumber
    message: ToolResultMessage
    error: ToolErrorInfo | None = optional()
    """Set when the call failed."""
    meta: FrozenJson | None = optional()
    """Presentation facts for UIs; never sent to the model."""


class RequestConfig(OpenDshModel):
    """The call configuration of a request header. Fields beyond the typed ones are
    kept, deep-frozen, so a header from a richer harness round-trips."""

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    max_tokens: int | None = optional(ge=1, le=JSON_INT_MAX)
    temperature: float | None = optional(ge=0)
    top_p: float | None = optional(ge=0, le=1)
    """Nucleus sampling (``topP``; a dsh field the TypeScript harness keeps as extra)."""
    stop: tuple[str, ...] | None = optional()
    reasoning_effort: str | None = optional()


class RequestHeader(DshModel):
    """Everything of a model request except its messages."""

    config: RequestConfig
    adapter_defaults: FrozenJson | None = optional()
    """Which config fields the adapter filled in itself (written by the TypeScript
    harness; kept for round trips)."""
    system: str | None = optional()
    """The system prompt; omitted when empty."""
    tools: tuple[ToolSchema, ...] | None = optional()
    """The tools offered to the model; omitted when there are none."""


class RequestHeaderData(DshModel):
    """``request/header``: a snapshot of the header, logged when it changes."""

    header: RequestHeader
    reason: Literal["initial", "resume", "change"]
    """``initial``: first header of the log; ``resume``: first header of a loop over an
    existing log; ``change``: the header differs from the previous one."""


class InboxSplicedData(DshModel):
    """``agent/inbox/spliced``: one mutation of a pending inbox list."""

    target: Literal["next-turn", "next-step"]
    start: NonNegativeInt
    removed_count: int | None = optional(ge=1, le=JSON_INT_MAX)
    """How many items were removed at ``start``; omitted (``None``) when none."""
    inserted: tuple[UserMessage, ...] = ()
    """The messages inserted at ``start``, in order."""
    outcome: Literal["canceled"] | None = optional()
    """``canceled`` for removals by a caller or by cancellation; absent for claims."""

    @field_validator("removed_count", mode="before")
    @classmethod
    def _zero_means_absent(cls, value: object) -> object:
        return None if value == 0 and not isinstance(value, bool) else value


class RequestContextData(DshModel):
    """``request/context``: route metadata, logged only."""

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    context_window: int | None = optional(ge=1, le=JSON_INT_MAX)


class EndSeedData(DshModel):
    """``session/end-seed``: marks where a seeded prefix (fork or resume) ends."""


# --- surface operations -----------------------------------------------------------------


class Replace(DshModel):
    """Replace the inclusive range of surface nodes from the one holding event ``start``
    to the one holding event ``end`` (both seqs) with the new event's message."""

    op: Literal["replace"] = "replace"
    start: NonNegativeInt
    end: NonNegativeInt


def _surface_op_kind(value: object) -> str | None:
    if value == "append":
        return "append"
    return "replace" if isinstance(value, (Replace, Mapping)) else None


SurfaceOp: TypeAlias = Annotated[
    Annotated[Literal["append"], Tag("append")] | Annotated[Replace, Tag("replace")],
    Discriminator(
        _surface_op_kind,
        custom_error_type="invalid_surface_op",
        custom_error_message="surfaceOp must be 'append' or {op: 'replace', start, end}",
    ),
]
"""How a surface event changes the model-visible surface: ``"append"`` or a
:class:`Replace`."""


# --- the envelope -----------------------------------------------------------------------

_ABSTRACT_ENVELOPE = (
    "SessionEvent is the abstract envelope; build a concrete event class "
    "(e.g. TurnStartEvent) or validate with SessionEventAdapter"
)


class SessionEvent(DshModel):
    """One durable event. Concrete events are the subclasses below, tagged on ``type``;
    validate unknown input with :data:`SessionEventAdapter` (or
    ``SessionEvent.model_validate``, which dispatches to it)."""

    type: str
    """The event type, e.g. ``turn/start``."""
    seq: NonNegativeInt
    """Position in the log, contiguous from 0."""
    time: NonNegativeInt
    """When the event was appended, epoch milliseconds."""
    data: Any
    """The typed payload (for ``user/message``, the message itself)."""
    source_event_seqs: tuple[NonNegativeInt, ...] | None = optional()
    """Events this one was made from (chunks, a tool call, shadowed nodes)."""
    surface_op: SurfaceOp | None = optional()
    """How a surface event changes the surface; only surface events carry it."""
    ignorable: bool | None = optional()
    """Readers that do not know this type may skip it."""

    # The refusal sits in ``__init__``, the way Python code builds a model. Marked as
    # pydantic's own ``__init__`` (``__pydantic_base_init__``), it is not called by
    # validation, which builds the concrete classes only: the guard costs appends
    # nothing (a ``__new__`` guard cost a Python frame per event).
    def __init__(self, /, **data: Any) -> None:
        if type(self) is SessionEvent:
            raise TypeError(_ABSTRACT_ENVELOPE)
        super().__init__(**data)

    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Self:
        """Validate an event; on the base class, dispatch on ``type``."""
        if cls is SessionEvent:
            return SessionEventAdapter.validate_python(obj, **kwargs)  # type: ignore[return-value]
        return super().model_validate(obj, **kwargs)

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> Self:
        """Validate an event from JSON; on the base class, dispatch on ``type``."""
        if cls is SessionEvent:
            return SessionEventAdapter.validate_json(json_data, **kwargs)  # type: ignore[return-value]
        return super().model_validate_json(json_data, **kwargs)


class _SurfaceEvent(SessionEvent):
    """An event that puts a message on the surface; it must say how."""

    surface_op: SurfaceOp


class _PlainEvent(SessionEvent):
    """An event that is not on the surface; it carries no surface fields."""

    # Always None, so never dumped: excluded outright rather than tested per dump.
    source_event_seqs: None = Field(default=None, exclude=True)
    surface_op: None = Field(default=None, exclude=True)

    @field_validator("source_event_seqs", "surface_op", mode="before")
    @classmethod
    def _not_on_surface(cls, value: object) -> object:
        if value is not None:
            raise ValueError(
                "only surface events (user/message, assistant/message, tool/result) "
                "carry surfaceOp or sourceEventSeqs"
            )
        return value


class TurnStartEvent(_PlainEvent):
    type: Literal["turn/start"] = "turn/start"
    data: TurnStartData


class TurnEndEvent(_PlainEvent):
    type: Literal["turn/end"] = "turn/end"
    data: TurnEndData


class StepStartEvent(_PlainEvent):
    type: Literal["step/start"] = "step/start"
    data: StepData


class StepEndEvent(_PlainEvent):
    type: Literal["step/end"] = "step/end"
    data: StepData


class UserMessageEvent(_SurfaceEvent):
    type: Literal["user/message"] = "user/message"
    data: UserMessage


class AssistantChunkEvent(_PlainEvent):
    type: Literal["assistant/chunk"] = "assistant/chunk"
    data: AssistantChunkData


class AssistantMessageEvent(_SurfaceEvent):
    type: Literal["assistant/message"] = "assistant/message"
    data: AssistantMessageData


class ToolCallEvent(_PlainEvent):
    type: Literal["tool/call"] = "tool/call"
    data: ToolCallData


class ToolResultEvent(_SurfaceEvent):
    type: Literal["tool/result"] = "tool/result"
    data: ToolResultData


class RequestHeaderEvent(_PlainEvent):
    type: Literal["request/header"] = "request/header"
    data: RequestHeaderData


class InboxSplicedEvent(_PlainEvent):
    type: Literal["agent/inbox/spliced"] = "agent/inbox/spliced"
    data: InboxSplicedData


class RequestContextEvent(_PlainEvent):
    type: Literal["request/context"] = "request/context"
    data: RequestContextData


class EndSeedEvent(_PlainEvent):
    type: Literal["session/end-seed"] = "session/end-seed"
    data: EndSeedData = EndSeedData()


class CompactionStartEvent(_PlainEvent):
    type: Literal["compaction/start"] = "compaction/start"
    data: CompactionStartData


class CompactionSummaryEvent(_PlainEvent):
    type: Literal["compaction/summary"] = "compaction/summary"
    data: CompactionSummaryData


class CompactionPruneEvent(_PlainEvent):
    type: Literal["compaction/prune"] = "compaction/prune"
    data: CompactionPruneData


class CompactionEndEvent(_PlainEvent):
    type: Literal["compaction/end"] = "compaction/end"
    data: CompactionEndData


class LlmRetryEvent(_PlainEvent):
    type: Literal["llm/retry"] = "llm/retry"
    data: LlmRetryData


class LlmRetryStartedEvent(_PlainEvent):
    type: Literal["llm/retry-started"] = "llm/retry-started"
    data: LlmRetryStartedData


class ApprovalAskedEvent(_PlainEvent):
    type: Literal["approval/asked"] = "approval/asked"
    data: ApprovalAskedData


class ApprovalDecidedEvent(_PlainEvent):
    type: Literal["approval/decided"] = "approval/decided"
    data: ApprovalDecidedData


class ApprovalPolicyEvent(_PlainEvent):
    type: Literal["approval/policy"] = "approval/policy"
    data: ApprovalPolicyData


class ForeignEvent(_PlainEvent):
    """An event of a harness type dsh does not act on (see
    :data:`~dsh_session._events_harness.ForeignEventType`), kept losslessly as frozen
    JSON whether or not it is marked ignorable."""

    type: ForeignEventType
    data: FrozenJson


class UnknownEvent(_PlainEvent):
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


_KnownEventClasses: TypeAlias = (
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

KnownEvent: TypeAlias = Annotated[_KnownEventClasses, Field(discriminator="type")]
"""Any event of a known type, tagged on ``type``."""

LogEvent: TypeAlias = _KnownEventClasses | UnknownEvent
"""Any event a log holds, as a plain union for type checkers: ``session.events`` items
narrow on ``event.type == "..."`` (or ``match``/``isinstance``) to their class."""

AnySessionEvent: TypeAlias = Annotated[KnownEvent | UnknownEvent, Field(union_mode="left_to_right")]
"""Any event this version can hold: a known type, or an ignorable unknown one."""

SessionEventAdapter: TypeAdapter[AnySessionEvent] = TypeAdapter(AnySessionEvent)
"""Validates (from Python or JSON) and dumps one event of any type."""

_TYPED_CLASSES: tuple[type[SessionEvent], ...] = tuple(
    cls for cls in get_args(_KnownEventClasses) if cls is not ForeignEvent
)
EVENT_CLASSES: dict[str, type[SessionEvent]] = {
    **{cls.model_fields["type"].default: cls for cls in _TYPED_CLASSES},
    **dict.fromkeys(get_args(ForeignEventType), ForeignEvent),
}
"""The event class of each known type."""
