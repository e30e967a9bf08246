"""OpenAI chat-completions stream → dsh chunks.

Deltas are forwarded as they arrive; block ends, usage and the finish are held until
the provider's stream is exhausted, because usage comes in a trailing chunk after the
one carrying ``finish_reason``. The first ``finish_reason`` is final: deltas and
finish reasons after it are ignored, later usage is still taken. A stream that ends
without a ``finish_reason`` was cut short and ends in an error finish.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any

from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall

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
from dsh_llm.providers._blocks import BlockBuilder
from dsh_llm.providers._errors import _MalformedResponseError
from dsh_llm.providers._openai_wire import REASONING_FIELDS, REPLAY_FORMAT
from dsh_llm.providers._streaming import stream_cut_short, unknown_stop
from dsh_llm.providers._wire_values import (
    index,
    items,
    optional_call_id,
    optional_count,
    optional_name,
    optional_text,
    required_count,
)


class ChatStreamTranslator:
    """Translates the chunks of one chat-completions stream (choice 0)."""

    finished = False
    """The stream is read to its end (``[DONE]``): usage may follow the finish."""

    def __init__(self) -> None:
        self._blocks = BlockBuilder()
        self._text_index: int | None = None
        self._reasoning_index: int | None = None
        self._reasoning_field: str | None = None
        self._tool_indices: dict[int, int] = {}
        self._finish_reason: str | None = None
        self._usage: TokenUsage | None = None

    def feed(self, event: ChatCompletionChunk) -> list[StreamChunk]:
        if not isinstance(event, ChatCompletionChunk):
            # The SDK hands over a ``data`` that is not a JSON object as it parsed it
            # (a list, a number, a string), unvalidated like every other field.
            raise _MalformedResponseError(
                "the stream event", f"is {reprlib.repr(event)}, not an object"
            )
        if event.usage is not None:
            self._usage = usage_from_wire(event.usage)
        chunks: list[StreamChunk] = []
        for position, choice in enumerate(items(event.choices, "choices")):
            where = f"choices[{position}]"
            if self._finish_reason is not None or index(choice.index, f"{where}.index") != 0:
                continue
            self._feed_delta(choice.delta, f"{where}.delta", chunks)
            reason = optional_name(choice.finish_reason, f"{where}.finish_reason")
            if reason is not None:
                self._finish_reason = reason
        return chunks

    def end(self) -> list[StreamChunk]:
        if self._finish_reason is None:
            return [stream_cut_short("no finish_reason")]
        chunks: list[StreamChunk] = [*self._blocks.end_all()]
        if self._usage is not None:
            chunks.append(UsageChunk(usage=self._usage))
        reason = self._finish()
        replay = None
        if isinstance(reason, ToolCallsFinish) and self._reasoning_field is not None:
            replay = {"format": REPLAY_FORMAT, "reasoningField": self._reasoning_field}
        chunks.append(FinishChunk(reason=reason, replay_state=replay))
        return chunks

    def _feed_delta(self, delta: ChoiceDelta, where: str, chunks: list[StreamChunk]) -> None:
        reasoning = self._reasoning_of(delta)
        if reasoning:
            if self._reasoning_index is None:
                self._reasoning_index, start = self._blocks.start("reasoning")
                chunks.append(start)
            chunks.extend(self._blocks.append_text(self._reasoning_index, reasoning))
        content = optional_text(delta.content, f"{where}.content")
        if content:
            if self._text_index is None:
                self._text_index, start = self._blocks.start("text")
                chunks.append(start)
            chunks.extend(self._blocks.append_text(self._text_index, content))
        for position, call in enumerate(items(delta.tool_calls, f"{where}.tool_calls")):
            self._feed_tool_call(call, f"{where}.tool_calls[{position}]", chunks)

    def _feed_tool_call(
        self, call: ChoiceDeltaToolCall, where: str, chunks: list[StreamChunk]
    ) -> None:
        wire_index = index(call.index, f"{where}.index")
        block_index = self._tool_indices.get(wire_index)
        if block_index is None:
            block_index, start = self._blocks.start("tool-call")
            self._tool_indices[wire_index] = block_index
            chunks.append(start)
        function = call.function
        name = arguments = None
        if function is not None:
            name = optional_name(function.name, f"{where}.function.name")
            arguments = optional_text(function.arguments, f"{where}.function.arguments")
        chunks.append(
            self._blocks.append_tool_call(
                block_index,
                call_id=optional_call_id(call.id, f"{where}.id"),
                name=name,
                arguments=arguments or "",
            )
        )

    def _reasoning_of(self, delta: ChoiceDelta) -> str | None:
        """Reasoning text from the non-standard delta field, remembering which field
        it came in (the same field carries it back)."""
        extra: Mapping[str, Any] = delta.model_extra or {}
        for name in REASONING_FIELDS:
            value = extra.get(name)
            if isinstance(value, str) and value:
                self._reasoning_field = self._reasoning_field or name
                return value
        return None

    def _finish(self) -> FinishReason:
        reason = self._finish_reason
        if reason in ("tool_calls", "function_call") or (
            reason == "stop" and self._blocks.has("tool-call")
        ):
            # Some servers (older Ollama) say "stop" after streaming tool calls.
            return ToolCallsFinish()
        if reason == "stop":
            return StopFinish()
        if reason == "length":
            return MaxTokensFinish()
        if reason == "content_filter":
            return ErrorFinish(
                failure=LlmFailure(
                    message="the provider's content filter stopped the response",
                    code=stop_reason_code(reason),
                )
            )
        return unknown_stop(reason)


def usage_from_wire(usage: CompletionUsage) -> TokenUsage:
    """Disjoint token counts: cached prompt tokens (OpenAI's
    ``prompt_tokens_details.cached_tokens``, DeepSeek's ``prompt_cache_hit_tokens``)
    are taken out of ``input_tokens`` and reported as cache reads."""
    details = usage.prompt_tokens_details
    cached = (
        optional_count(details.cached_tokens, "usage.prompt_tokens_details.cached_tokens")
        if details is not None
        else None
    )
    if cached is None:
        hit = (usage.model_extra or {}).get("prompt_cache_hit_tokens")
        cached = optional_count(hit, "usage.prompt_cache_hit_tokens")
    output_details = usage.completion_tokens_details
    reasoning = (
        optional_count(
            output_details.reasoning_tokens, "usage.completion_tokens_details.reasoning_tokens"
        )
        if output_details is not None
        else None
    )
    return TokenUsage(
        input_tokens=max(
            required_count(usage.prompt_tokens, "usage.prompt_tokens") - (cached or 0), 0
        ),
        output_tokens=required_count(usage.completion_tokens, "usage.completion_tokens"),
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


__all__ = [
    "ChatStreamTranslator",
    "usage_from_wire",
]
