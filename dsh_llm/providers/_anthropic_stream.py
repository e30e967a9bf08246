"""Anthropic Messages stream → dsh chunks.

Each content block the API streams becomes one dsh block, closed by its
``content_block_stop``: text, thinking (a reasoning block; its signature goes to the
replay state), redacted thinking (an empty reasoning block; its data goes to the
replay state) and tool use. Blocks of server-side tools are not part of dsh content
and are skipped. Usage and the finish are held until ``message_stop``, where reading
stops; a stream without it was cut short and ends in an error finish. The first stop
reason is final: content events and stop reasons after it are ignored.
"""

from __future__ import annotations

from typing import Any

from anthropic.types import (
    InputJSONDelta,
    MessageDeltaUsage,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RawMessageStreamEvent,
    RedactedThinkingBlock,
    SignatureDelta,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolUseBlock,
    Usage,
)

from dsh_llm._failure import LlmFailure
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
from dsh_llm.providers._anthropic_wire import REPLAY_FORMAT
from dsh_llm.providers._blocks import BlockBuilder, StreamedBlockType
from dsh_llm.providers._errors import _MalformedResponseError
from dsh_llm.providers._streaming import stream_cut_short, unknown_stop
from dsh_llm.providers._wire_values import (
    index,
    optional_call_id,
    optional_count,
    optional_name,
    optional_text,
)

_FINISH_BY_STOP_REASON: dict[str | None, FinishReason] = {
    None: StopFinish(),
    "end_turn": StopFinish(),
    "stop_sequence": StopFinish(),
    "tool_use": ToolCallsFinish(),
    "max_tokens": MaxTokensFinish(),
    "model_context_window_exceeded": MaxTokensFinish(),
    "refusal": ErrorFinish(
        failure=LlmFailure(message="the model refused to answer", code=stop_reason_code("refusal"))
    ),
}


_BLOCK_TYPE_BY_DELTA: dict[type, StreamedBlockType] = {
    TextDelta: "text",
    ThinkingDelta: "reasoning",
    InputJSONDelta: "tool-call",
}
"""The only block type each kind of streamed delta may extend."""


class MessagesStreamTranslator:
    """Translates the events of one Messages stream."""

    def __init__(self) -> None:
        self._blocks = BlockBuilder()
        self._indices: dict[int, int] = {}
        """Wire block index → dsh block index, for the blocks that are content."""
        self._thinking: list[dict[str, Any]] = []
        self._thinking_by_wire_index: dict[int, dict[str, Any]] = {}
        self._usage: dict[str, int] = {}
        self._stop_reason: str | None = None
        self._stopped = False

    @property
    def finished(self) -> bool:
        """``message_stop`` came: nothing after it belongs to this message."""
        return self._stopped

    def feed(self, event: RawMessageStreamEvent) -> list[StreamChunk]:
        if isinstance(event, RawMessageStartEvent):
            self._take_usage(event.message.usage, "message.usage")
        elif isinstance(event, RawMessageDeltaEvent):
            self._take_usage(event.usage, "usage")
            reason = optional_name(event.delta.stop_reason, "delta.stop_reason")
            self._stop_reason = self._stop_reason or reason
        elif isinstance(event, RawMessageStopEvent):
            self._stopped = True
        elif self._stop_reason is not None:
            pass  # content after the stop reason is not part of the message
        elif isinstance(event, RawContentBlockStartEvent):
            return self._start_block(event)
        elif isinstance(event, RawContentBlockDeltaEvent):
            return self._delta(event)
        elif isinstance(event, RawContentBlockStopEvent):
            block_index = self._indices.get(index(event.index, "index"))
            return self._blocks.end(block_index) if block_index is not None else []
        return []

    def end(self) -> list[StreamChunk]:
        if not self._stopped:
            return [stream_cut_short("no message_stop")]
        chunks: list[StreamChunk] = [*self._blocks.end_all()]
        usage = self._token_usage()
        if usage is not None:
            chunks.append(UsageChunk(usage=usage))
        reason = _FINISH_BY_STOP_REASON.get(self._stop_reason)
        if reason is None:
            reason = unknown_stop(self._stop_reason)
        replay = None
        if self._thinking and not isinstance(reason, ErrorFinish):
            replay = {"format": REPLAY_FORMAT, "thinking": self._thinking}
        chunks.append(FinishChunk(reason=reason, replay_state=replay))
        return chunks

    def _start_block(self, event: RawContentBlockStartEvent) -> list[StreamChunk]:
        wire_index = index(event.index, "index")
        block = event.content_block
        if isinstance(block, TextBlock):
            text = optional_text(block.text, "content_block.text")
            block_index, start = self._open(wire_index, "text")
            return [start, *self._blocks.append_text(block_index, text)] if text else [start]
        if isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            entry, text = _thinking_entry(block)
            block_index, start = self._open(wire_index, "reasoning")
            self._thinking.append(entry)
            self._thinking_by_wire_index[wire_index] = entry
            return [start, *self._blocks.append_text(block_index, text)] if text else [start]
        if isinstance(block, ToolUseBlock):
            call_id = optional_call_id(block.id, "content_block.id")
            name = optional_name(block.name, "content_block.name")
            block_index, start = self._open(wire_index, "tool-call")
            call = self._blocks.append_tool_call(block_index, call_id=call_id, name=name)
            return [start, call]
        return []

    def _open(self, wire_index: int, block_type: StreamedBlockType) -> tuple[int, StreamChunk]:
        block_index, start = self._blocks.start(block_type)
        self._indices[wire_index] = block_index
        return block_index, start

    def _delta(self, event: RawContentBlockDeltaEvent) -> list[StreamChunk]:
        wire_index = index(event.index, "index")
        block_index = self._indices.get(wire_index)
        if block_index is None:
            return []
        delta = event.delta
        expected = _BLOCK_TYPE_BY_DELTA.get(type(delta))
        if expected is not None and self._blocks.type_of(block_index) != expected:
            raise _MalformedResponseError(
                "delta.type",
                f"is {delta.type!r}, but block {wire_index} is not a {expected} block",
            )
        if isinstance(delta, TextDelta):
            text = optional_text(delta.text, "delta.text") or ""
            return self._blocks.append_text(block_index, text)
        if isinstance(delta, ThinkingDelta):
            text = optional_text(delta.thinking, "delta.thinking") or ""
            return self._blocks.append_text(block_index, text)
        if isinstance(delta, InputJSONDelta):
            arguments = optional_text(delta.partial_json, "delta.partial_json") or ""
            return [self._blocks.append_tool_call(block_index, arguments=arguments)]
        if isinstance(delta, SignatureDelta):
            entry = self._thinking_by_wire_index.get(wire_index)
            if entry is not None:
                entry["signature"] = optional_name(delta.signature, "delta.signature")
        return []

    def _take_usage(self, usage: Usage | MessageDeltaUsage, where: str) -> None:
        """Keep the latest value of every count: ``message_delta`` counts are
        cumulative and may repeat or complete those of ``message_start``."""
        details = getattr(usage, "output_tokens_details", None)
        wire_counts = {
            "input": ("input_tokens", usage.input_tokens),
            "output": ("output_tokens", usage.output_tokens),
            "cache_read": ("cache_read_input_tokens", usage.cache_read_input_tokens),
            "cache_write": ("cache_creation_input_tokens", usage.cache_creation_input_tokens),
            "reasoning": (
                "output_tokens_details.thinking_tokens",
                getattr(details, "thinking_tokens", None),
            ),
        }
        for name, (field, value) in wire_counts.items():
            count = optional_count(value, f"{where}.{field}")
            if count is not None:
                self._usage[name] = count

    def _token_usage(self) -> TokenUsage | None:
        """Anthropic's counts are already disjoint: ``input_tokens`` excludes cache
        reads and cache writes."""
        if not self._usage:
            return None
        return TokenUsage(
            input_tokens=self._usage.get("input", 0),
            output_tokens=self._usage.get("output", 0),
            cache_read_tokens=self._usage.get("cache_read"),
            cache_write_tokens=self._usage.get("cache_write"),
            reasoning_tokens=self._usage.get("reasoning"),
        )


def _thinking_entry(block: ThinkingBlock | RedactedThinkingBlock) -> tuple[dict[str, Any], str]:
    """The replay entry of a thinking block, and the text it opens with."""
    if isinstance(block, RedactedThinkingBlock):
        return {
            "type": "redacted_thinking",
            "data": optional_name(block.data, "content_block.data"),
        }, ""
    signature = optional_name(block.signature, "content_block.signature")
    text = optional_text(block.thinking, "content_block.thinking") or ""
    return {"type": "thinking", "signature": signature}, text


__all__ = [
    "MessagesStreamTranslator",
]
