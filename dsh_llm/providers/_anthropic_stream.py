"""Anthropic Messages stream → dsh chunks.

Each content block the API streams becomes one dsh block, closed by its
``content_block_stop``: text, thinking (a reasoning block; its signature goes to the
replay state), redacted thinking (an empty reasoning block; its data goes to the
replay state) and tool use. Blocks of server-side tools are not part of dsh content
and are skipped. Usage and the finish are held until the stream is exhausted; a
stream without ``message_stop`` was cut short and ends in an error finish.
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

from dsh_llm.providers._anthropic_wire import REPLAY_FORMAT
from dsh_llm.providers._blocks import BlockBuilder
from dsh_llm.providers._errors import CONTENT_FILTERED
from dsh_llm.providers._streaming import stream_cut_short, unknown_stop
from dsh_llm.stream import (
    ErrorFinish,
    FinishChunk,
    FinishReason,
    LlmFailure,
    MaxTokensFinish,
    StopFinish,
    StreamChunk,
    TokenUsage,
    ToolCallsFinish,
    UsageChunk,
)

_FINISH_BY_STOP_REASON: dict[str | None, FinishReason] = {
    None: StopFinish(),
    "end_turn": StopFinish(),
    "stop_sequence": StopFinish(),
    "tool_use": ToolCallsFinish(),
    "max_tokens": MaxTokensFinish(),
    "model_context_window_exceeded": MaxTokensFinish(),
    "refusal": ErrorFinish(
        failure=LlmFailure(message="the model refused to answer", code=CONTENT_FILTERED)
    ),
}


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

    def feed(self, event: RawMessageStreamEvent) -> list[StreamChunk]:
        if isinstance(event, RawContentBlockStartEvent):
            return self._start_block(event)
        if isinstance(event, RawContentBlockDeltaEvent):
            return self._delta(event)
        if isinstance(event, RawContentBlockStopEvent):
            index = self._indices.get(event.index)
            end = self._blocks.end(index) if index is not None else None
            return [end] if end is not None else []
        if isinstance(event, RawMessageStartEvent):
            self._take_usage(event.message.usage)
        elif isinstance(event, RawMessageDeltaEvent):
            self._take_usage(event.usage)
            self._stop_reason = event.delta.stop_reason or self._stop_reason
        elif isinstance(event, RawMessageStopEvent):
            self._stopped = True
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
        block = event.content_block
        if isinstance(block, TextBlock):
            index, start = self._blocks.start("text")
            self._indices[event.index] = index
            return [start, self._blocks.append_text(index, block.text)] if block.text else [start]
        if isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            index, start = self._blocks.start("reasoning")
            self._indices[event.index] = index
            entry: dict[str, Any]
            if isinstance(block, RedactedThinkingBlock):
                entry = {"type": "redacted_thinking", "data": block.data}
            else:
                entry = {"type": "thinking", "signature": block.signature}
            self._thinking.append(entry)
            self._thinking_by_wire_index[event.index] = entry
            if isinstance(block, ThinkingBlock) and block.thinking:
                return [start, self._blocks.append_text(index, block.thinking)]
            return [start]
        if isinstance(block, ToolUseBlock):
            index, start = self._blocks.start("tool-call")
            self._indices[event.index] = index
            return [start, self._blocks.append_tool_call(index, call_id=block.id, name=block.name)]
        return []

    def _delta(self, event: RawContentBlockDeltaEvent) -> list[StreamChunk]:
        index = self._indices.get(event.index)
        if index is None:
            return []
        delta = event.delta
        if isinstance(delta, TextDelta):
            return [self._blocks.append_text(index, delta.text)]
        if isinstance(delta, ThinkingDelta):
            return [self._blocks.append_text(index, delta.thinking)]
        if isinstance(delta, InputJSONDelta):
            return [self._blocks.append_tool_call(index, arguments=delta.partial_json)]
        if isinstance(delta, SignatureDelta):
            entry = self._thinking_by_wire_index.get(event.index)
            if entry is not None:
                entry["signature"] = delta.signature
        return []

    def _take_usage(self, usage: Usage | MessageDeltaUsage) -> None:
        """Keep the latest value of every count: ``message_delta`` counts are
        cumulative and may repeat or complete those of ``message_start``."""
        details = getattr(usage, "output_tokens_details", None)
        counts = {
            "input": usage.input_tokens,
            "output": usage.output_tokens,
            "cache_read": usage.cache_read_input_tokens,
            "cache_write": usage.cache_creation_input_tokens,
            "reasoning": getattr(details, "thinking_tokens", None),
        }
        self._usage.update({name: value for name, value in counts.items() if value is not None})

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
