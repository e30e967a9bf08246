"""What a model adapter streams: chunks, token usage, finish reasons and failures."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field, TypeAdapter

from dsh_llm._content import ContentBlock
from dsh_llm._frozen_json import JSON_INT_MAX, JSON_INT_MIN, FrozenJson
from dsh_llm._ids import CallIdField
from dsh_llm._model import DshModel, SerializedByMemberType, optional
from dsh_llm.errors import LlmError

NonNegativeInt = Annotated[int, Field(ge=0, le=JSON_INT_MAX)]


class TokenUsage(DshModel):
    """Token counts of one model call. The counts are disjoint: ``input_tokens``
    excludes cached input, which is counted in ``cache_read_tokens``."""

    input_tokens: NonNegativeInt
    output_tokens: NonNegativeInt
    cache_read_tokens: NonNegativeInt | None = optional()
    cache_write_tokens: NonNegativeInt | None = optional()
    reasoning_tokens: NonNegativeInt | None = optional()
    """Part of ``output_tokens`` spent on reasoning, when the provider reports it."""


class LlmFailure(DshModel):
    """Why a model call failed, in provider-neutral terms."""

    message: str
    code: str
    """A stable code, one of the harness's canonical ones in :mod:`dsh_llm.failure_codes`
    (e.g. ``RATE_LIMIT``, ``SERVER``, ``UNKNOWN``); any string is accepted on read."""
    status: int | None = optional(ge=JSON_INT_MIN, le=JSON_INT_MAX)
    """The HTTP status, when there was one."""
    provider_retry_after_ms: NonNegativeInt | None = optional()
    """How long the provider asked to wait before retrying."""
    request_id: str | None = optional()
    """The provider's request id, for support tickets."""

    @classmethod
    def from_exception(cls, error: BaseException) -> LlmFailure:
        """The failure an exception stands for, so that an adapter's or model function's
        crash can end its stream as ``finish {error}``: an :class:`LlmError` keeps the
        failure it carries; anything else is code ``UNKNOWN``."""
        if isinstance(error, LlmError) and error.failure is not None:
            return error.failure
        detail = str(error)
        message = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
        return cls(message=message, code="UNKNOWN")


class StopFinish(DshModel):
    kind: Literal["stop"] = "stop"


class ToolCallsFinish(DshModel):
    kind: Literal["tool-calls"] = "tool-calls"


class MaxTokensFinish(DshModel):
    kind: Literal["max-tokens"] = "max-tokens"


class AbortedFinish(DshModel):
    kind: Literal["aborted"] = "aborted"
    failure: LlmFailure


class ErrorFinish(DshModel):
    kind: Literal["error"] = "error"
    failure: LlmFailure


FinishReason: TypeAlias = Annotated[
    StopFinish | ToolCallsFinish | MaxTokensFinish | AbortedFinish | ErrorFinish,
    Field(discriminator="kind"),
    SerializedByMemberType,
]
"""Why a stream ended, tagged on ``kind``."""

BlockType: TypeAlias = Literal["text", "reasoning", "image", "tool-call", "tool-result"]


class BlockStartChunk(DshModel):
    """A block at ``index`` begins."""

    type: Literal["block-start"] = "block-start"
    index: NonNegativeInt
    block_type: BlockType


class TextDeltaChunk(DshModel):
    type: Literal["text-delta"] = "text-delta"
    index: NonNegativeInt
    text: str


class ReasoningDeltaChunk(DshModel):
    type: Literal["reasoning-delta"] = "reasoning-delta"
    index: NonNegativeInt
    text: str


class ToolCallDeltaChunk(DshModel):
    """Part of a streamed tool call: the id (last one wins), the name once known,
    and the next piece of the raw arguments text."""

    type: Literal["tool-call-delta"] = "tool-call-delta"
    index: NonNegativeInt
    call_id: CallIdField = Field(alias="id")
    name: str | None = optional()
    arguments_delta: str = ""


class BlockEndChunk(DshModel):
    """The authoritative, complete block at ``index``; it closes the block."""

    type: Literal["block-end"] = "block-end"
    index: NonNegativeInt
    block: ContentBlock


class UsageChunk(DshModel):
    type: Literal["usage"] = "usage"
    usage: TokenUsage


class FinishChunk(DshModel):
    """The end of the stream, with the provider state to replay on later requests."""

    type: Literal["finish"] = "finish"
    reason: FinishReason
    replay_state: FrozenJson | None = optional()


StreamChunk: TypeAlias = Annotated[
    BlockStartChunk
    | TextDeltaChunk
    | ReasoningDeltaChunk
    | ToolCallDeltaChunk
    | BlockEndChunk
    | UsageChunk
    | FinishChunk,
    Field(discriminator="type"),
    SerializedByMemberType,
]
"""One streamed piece of model output, tagged on ``type``."""

StreamChunkAdapter: TypeAdapter[StreamChunk] = TypeAdapter(StreamChunk)
FinishReasonAdapter: TypeAdapter[FinishReason] = TypeAdapter(FinishReason)
