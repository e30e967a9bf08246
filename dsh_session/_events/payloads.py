"""The payloads of the event types dsh defines, one class per type's ``data`` (the
payloads of the harness's own types are in :mod:`dsh_session._events_harness`; a
``user/message`` carries the message itself). Fields are declared in the order the
harness writes them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from dsh_llm._frozen_json import FrozenJson
from dsh_llm._ids import CallIdField
from dsh_llm._json_limits import JSON_INT_MAX
from dsh_llm._messages import AssistantMessage, ToolResultMessage, UserMessage
from dsh_llm._model import DshModel, optional
from dsh_llm._open_model import OpenDshModel
from dsh_llm._prompt_cache import PromptCache
from dsh_llm._request import ToolSchema
from dsh_llm._stream import StreamChunk, TokenUsage
from dsh_session._events.envelope import NonNegativeInt, StepNumber, TurnNumber
from dsh_session._events.reasons import TurnEndReason

__all__ = [
    "AssistantChunkData",
    "AssistantMessageData",
    "EndSeedData",
    "InboxSplicedData",
    "RequestConfig",
    "RequestContextData",
    "RequestHeader",
    "RequestHeaderData",
    "StepData",
    "ToolCallData",
    "ToolErrorInfo",
    "ToolResultData",
    "TurnEndData",
    "TurnRunOptions",
    "TurnStartData",
]


class TurnRunOptions(DshModel):
    """The per-run options of the run that opened a turn: they hold for every request
    of the turn, across an approval wait and a restart. A dsh field of ``turn/start``
    (``runOptions``); the TypeScript harness reads only ``turn`` and ignores it. The
    headers logged before the turn's requests already say what was sent; this says
    what a process resuming the turn must apply again."""

    max_tokens: int | None = optional(ge=1, le=JSON_INT_MAX)
    temperature: float | None = optional(ge=0)
    top_p: float | None = optional(ge=0, le=1)
    stop: tuple[str, ...] | None = optional()
    reasoning_effort: str | None = optional()
    prompt_cache: PromptCache | None = optional()
    instructions: str | None = optional()
    """Instructions added to the system prompt for this run's requests."""
    output_tool: ToolSchema | None = optional()
    """The structured-output tool (``final_result``) the run offered."""
    output_corrections: int | None = optional(ge=0, le=JSON_INT_MAX)
    """How many failed answers the model may correct (with ``output_tool``)."""


class TurnStartData(DshModel):
    """``turn/start``: a turn opens."""

    turn: TurnNumber
    run_options: TurnRunOptions | None = optional()
    """Set when the turn was opened by a run with per-run options (dsh only)."""


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
    prompt_cache: PromptCache | None = optional()
    """Prompt caching controls (``promptCache``; a dsh field the TypeScript harness
    keeps as extra)."""


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
