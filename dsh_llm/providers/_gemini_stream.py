"""Gemini ``streamGenerateContent`` chunks → dsh chunks.

Each chunk carries the next parts of candidate 0. Consecutive text parts extend one
text block and consecutive thought parts one reasoning block; a function call is a
block of its own, complete when it arrives. A part carrying a thought signature
(base64 in the replay state, one entry per block) extends its block unless that
block already has one; a signature on an empty part (Gemini sends one at the end of
a stream) belongs to the block it follows. Parts that are not dsh content (code
execution, inline media) are skipped.

Usage comes with every chunk, cumulative: the latest is kept. The first finish
reason is final: parts after it are ignored, later usage is still taken. A stream
that ends without one was cut short, unless the prompt itself was blocked.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from google.genai import types

from dsh_llm._failure import LlmFailure
from dsh_llm._ids import CallId, new_uuid7
from dsh_llm._stream import (
    ErrorFinish,
    FinishChunk,
    FinishReason,
    MaxTokensFinish,
    StopFinish,
    StreamChunk,
    TokenUsage,
    ToolCallsFinish,
    UsageChunk,
)
from dsh_llm.failure_codes import stop_reason_code
from dsh_llm.providers._blocks import BlockBuilder, StreamedBlockType
from dsh_llm.providers._gemini_wire import REPLAY_FORMAT
from dsh_llm.providers._streaming import stream_cut_short, unknown_stop
from dsh_llm.providers._wire_values import (
    items,
    optional_call_id,
    optional_count,
    optional_name,
    optional_text,
)

FILTER_REASONS = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)
"""Finish reasons that mean a filter stopped the response: ``CONTENT_FILTER``."""
CONTENT_FILTER = stop_reason_code("content_filter")


class GenerateContentTranslator:
    """Translates the chunks of one ``streamGenerateContent`` call (candidate 0)."""

    finished = False
    """Read to the end of the stream: usage may follow the finish reason."""

    def __init__(self) -> None:
        self._blocks = BlockBuilder()
        self._open: int | None = None
        self._signatures: list[str | None] = []
        self._unnamed_calls: list[str] = []
        self._finish_reason: str | None = None
        self._blocked: str | None = None
        self._usage: TokenUsage | None = None

    def feed(self, event: types.GenerateContentResponse) -> list[StreamChunk]:
        """The SDK has validated the chunk's types; counts and names are checked here."""
        if event.usage_metadata is not None:
            self._usage = usage_from_wire(event.usage_metadata)
        feedback = event.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            self._blocked = _reason_name(feedback.block_reason, "promptFeedback.blockReason")
        chunks: list[StreamChunk] = []
        candidates = items(event.candidates, "candidates")
        if self._finish_reason is not None or not candidates:
            return chunks
        candidate = candidates[0]
        content = candidate.content
        parts = items(content.parts, "candidates[0].content.parts") if content else []
        for position, part in enumerate(parts):
            self._feed_part(part, f"candidates[0].content.parts[{position}]", chunks)
        if candidate.finish_reason is not None:
            self._finish_reason = _reason_name(
                candidate.finish_reason, "candidates[0].finishReason"
            )
        return chunks

    def end(self) -> list[StreamChunk]:
        if self._finish_reason is None and self._blocked is None:
            return [stream_cut_short("no finishReason")]
        chunks: list[StreamChunk] = [*self._blocks.end_all()]
        if self._usage is not None:
            chunks.append(UsageChunk(usage=self._usage))
        reason = self._finish()
        replay: dict[str, Any] | None = None
        if not isinstance(reason, ErrorFinish) and (any(self._signatures) or self._unnamed_calls):
            replay = {"format": REPLAY_FORMAT, "signatures": self._signatures}
            if self._unnamed_calls:
                replay["unnamedCalls"] = self._unnamed_calls
        chunks.append(FinishChunk(reason=reason, replay_state=replay))
        return chunks

    def _feed_part(self, part: types.Part, where: str, chunks: list[StreamChunk]) -> None:
        signature = _signature(part.thought_signature)
        call = part.function_call
        if call is not None:
            self._feed_call(call, signature, f"{where}.functionCall", chunks)
            return
        text = optional_text(part.text, f"{where}.text")
        if not text and signature is None:
            return  # nothing said, or not dsh content (code execution, inline media, ...)
        kind: StreamedBlockType = "reasoning" if part.thought else "text"
        if not text and self._open is not None:
            kind = self._blocks.type_of(self._open)  # a signature alone: the block it follows
        index = self._block_for(kind, signature, chunks)
        if text:
            chunks.extend(self._blocks.append_text(index, text))

    def _feed_call(
        self,
        call: types.FunctionCall,
        signature: str | None,
        where: str,
        chunks: list[StreamChunk],
    ) -> None:
        self._close_open(chunks)
        call_id = optional_call_id(call.id, f"{where}.id")
        if call_id is None:
            call_id = CallId(f"call_{new_uuid7()}")
            self._unnamed_calls.append(call_id)
        name = optional_name(call.name, f"{where}.name")
        index, start = self._blocks.start("tool-call")
        self._signatures.append(signature)
        chunks.append(start)
        arguments = json.dumps(call.args or {}, ensure_ascii=False)
        chunks.append(
            self._blocks.append_tool_call(index, call_id=call_id, name=name, arguments=arguments)
        )
        chunks.extend(self._blocks.end(index))

    def _block_for(
        self, kind: StreamedBlockType, signature: str | None, chunks: list[StreamChunk]
    ) -> int:
        """The open block a part of ``kind`` extends, or a new one."""
        index = self._open
        if (
            index is None
            or self._blocks.type_of(index) != kind
            or (signature is not None and self._signatures[index] is not None)
        ):
            self._close_open(chunks)
            index, start = self._blocks.start(kind)
            self._signatures.append(None)
            self._open = index
            chunks.append(start)
        if signature is not None:
            self._signatures[index] = signature
        return index

    def _close_open(self, chunks: list[StreamChunk]) -> None:
        if self._open is not None:
            chunks.extend(self._blocks.end(self._open))
            self._open = None

    def _finish(self) -> FinishReason:
        reason = self._finish_reason
        if reason is None:
            return ErrorFinish(
                failure=LlmFailure(
                    message=f"the provider blocked the prompt ({self._blocked})",
                    code=CONTENT_FILTER,
                )
            )
        if reason == "STOP":
            return ToolCallsFinish() if self._blocks.has("tool-call") else StopFinish()
        if reason == "MAX_TOKENS":
            return MaxTokensFinish()
        if reason in FILTER_REASONS:
            return ErrorFinish(
                failure=LlmFailure(
                    message=f"the provider's filter stopped the response ({reason})",
                    code=CONTENT_FILTER,
                )
            )
        return unknown_stop(reason)


def usage_from_wire(usage: types.GenerateContentResponseUsageMetadata) -> TokenUsage:
    """Disjoint counts: ``promptTokenCount`` includes the cached tokens, which are
    reported as cache reads; ``candidatesTokenCount`` excludes the thinking tokens,
    which ``output_tokens`` includes (as every dsh adapter counts them)."""
    prompt = optional_count(usage.prompt_token_count, "usageMetadata.promptTokenCount") or 0
    cached = optional_count(
        usage.cached_content_token_count, "usageMetadata.cachedContentTokenCount"
    )
    tool_prompt = optional_count(
        usage.tool_use_prompt_token_count, "usageMetadata.toolUsePromptTokenCount"
    )
    output = optional_count(usage.candidates_token_count, "usageMetadata.candidatesTokenCount")
    thoughts = optional_count(usage.thoughts_token_count, "usageMetadata.thoughtsTokenCount")
    return TokenUsage(
        input_tokens=max(prompt - (cached or 0), 0) + (tool_prompt or 0),
        output_tokens=(output or 0) + (thoughts or 0),
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )


def _signature(value: bytes | None) -> str | None:
    """A thought signature as base64 text, as the wire carries it (the SDK decodes it)."""
    return None if value is None else base64.b64encode(value).decode("ascii")


def _reason_name(value: object, field: str) -> str | None:
    """A finish or block reason: the SDK's enum member's value, or the wire text."""
    name = getattr(value, "value", value)
    return optional_name(name, field)


__all__ = [
    "FILTER_REASONS",
    "GenerateContentTranslator",
    "usage_from_wire",
]
