"""What a model adapter streams: chunks, token usage, finish reasons and failures."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field, TypeAdapter

from dsh_llm._content import ContentBlock
from dsh_llm._failure import LlmFailure
from dsh_llm._frozen_json import FrozenJson
from dsh_llm._ids import CallIdField
from dsh_llm._json_limits import NonNegativeInt
from dsh_llm._model import DshModel, SerializedByMemberType, optional


class TokenUsage(DshModel):
    """Token counts of one model call. The counts are disjoint: ``input_tokens``
    excludes cached input, which is counted in ``cache_read_tokens``."""

    input_tokens: NonNegativeInt
    output_tokens: NonNegativeInt
    cache_read_tokens: NonNegativeInt | None = optional()
    cache_write_tokens: NonNegativeInt | None = optional()
    reasoning_tokens: NonNegativeInt | None = optional()
    """Part of ``output_tokens`` spent on reasoning, when the provider reports it."""


class StopFinish(DshModel):
    """The model finished its answer on its own."""

    kind: Literal["stop"] = "stop"


class ToolCallsFinish(DshModel):
    """The model stopped to have its tool calls run."""

    kind: Literal["tool-calls"] = "tool-calls"


class MaxTokensFinish(DshModel):
    """The answer was cut at the output token limit."""

    kind: Literal["max-tokens"] = "max-tokens"


class AbortedFinish(DshModel):
    """The call was cancelled; ``failure`` says how."""

    kind: Literal["aborted"] = "aborted"
    failure: LlmFailure


class ErrorFinish(DshModel):
    """The call failed; ``failure`` says why."""

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
    """More text of the text block at ``index``."""

    type: Literal["text-delta"] = "text-delta"
    index: NonNegativeInt
    text: str


class ReasoningDeltaChunk(DshModel):
    """More reasoning text of the reasoning block at ``index``."""

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
    """The token counts of the call."""

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

__all__ = [
    "AbortedFinish",
    "BlockEndChunk",
    "BlockStartChunk",
    "BlockType",
    "ErrorFinish",
    "FinishChunk",
    "FinishReason",
    "FinishReasonAdapter",
    "MaxTokensFinish",
    "ReasoningDeltaChunk",
    "StopFinish",
    "StreamChunk",
    "StreamChunkAdapter",
    "TextDeltaChunk",
    "TokenUsage",
    "ToolCallDeltaChunk",
    "ToolCallsFinish",
    "UsageChunk",
]
