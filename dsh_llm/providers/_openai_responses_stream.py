"""OpenAI Responses stream → dsh chunks.

Events are told apart by their ``type`` (the SDK builds an event of a type it does not
know as some other event class, so its class says nothing). Output items are numbered
by ``output_index`` (named by their id where a server, as llama.cpp's, numbers none);
each part of one becomes a dsh block in first-seen order: an ``output_text`` part a
text block, a function call a tool-call block, each summary or
reasoning-text part of a reasoning item a reasoning block (an item with no text gets
one empty reasoning block, so the message still shows where it stood). A reasoning
item's id and encrypted content, taken from its ``response.output_item.done``, go to
the replay state.

The response ends at ``response.completed`` or ``response.incomplete``, where reading
stops; usage comes with them. ``response.failed`` and ``error`` end the call at once in
an error finish. A stream without any of them was cut short.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from pydantic import BaseModel

from dsh_llm._failure import LlmFailure
from dsh_llm._storable_text import storable_text
from dsh_llm._stream import (
    ErrorFinish,
    FinishChunk,
    FinishReason,
    StopFinish,
    StreamChunk,
    TokenUsage,
    ToolCallsFinish,
    UsageChunk,
)
from dsh_llm.failure_codes import stop_reason_code
from dsh_llm.providers._blocks import BlockBuilder
from dsh_llm.providers._errors import _MalformedResponseError
from dsh_llm.providers._openai_responses_endings import (
    error_event_failure,
    incomplete_finish,
    response_failure,
    usage_from_wire,
)
from dsh_llm.providers._openai_responses_wire import REPLAY_FORMAT, ReasoningPart
from dsh_llm.providers._streaming import error_finish, stream_cut_short
from dsh_llm.providers._wire_values import (
    index,
    items,
    optional_call_id,
    optional_name,
    optional_text,
    wire_object,
)

ItemKey: TypeAlias = int | str
"""An output item: its ``output_index``, or its id from a server that numbers none."""


def _item_key(event: Any, item_id: object, id_field: str) -> ItemKey:
    """The output item an event is about: its ``output_index``; a server that sends
    none (llama.cpp's) names the item by its id alone."""
    output = getattr(event, "output_index", None)
    if output is not None:
        return index(output, "output_index")
    key = optional_name(item_id, id_field)
    if not key:
        raise _MalformedResponseError("output_index", f"is missing, and so is {id_field}")
    return key


def _part_index(value: object, field: str) -> int:
    """A part's index within its item, 0 when the server numbers none."""
    return 0 if value is None else index(value, field)


@dataclass
class _ReasoningItem:
    """A reasoning output item: its id, encrypted content and blocks."""

    id: str | None = None
    encrypted: str | None = None
    blocks: list[tuple[int, ReasoningPart]] = field(default_factory=list)
    """(dsh block index, kind) of each of its blocks, in order."""
    parts: dict[tuple[ReasoningPart, int], int] = field(default_factory=dict)
    """(kind, the part's wire index) → dsh block index."""


class ResponsesStreamTranslator:
    """Translates the events of one Responses stream."""

    def __init__(self) -> None:
        self._blocks = BlockBuilder()
        self._texts: dict[tuple[ItemKey, int], int] = {}
        """(output item, content_index) → text block."""
        self._calls: dict[ItemKey, int] = {}
        """output item → tool-call block."""
        self._streamed_arguments: set[ItemKey] = set()
        self._named_calls: set[ItemKey] = set()
        """The calls whose id and name came with their first event."""
        self._reasoning: dict[ItemKey, _ReasoningItem] = {}
        self._refusal: list[str] = []
        self._usage: TokenUsage | None = None
        self._ending: FinishReason | None = None

    @property
    def finished(self) -> bool:
        """``response.completed`` or ``response.incomplete`` came."""
        return self._ending is not None

    def feed(self, event: object) -> list[StreamChunk]:
        if not isinstance(event, BaseModel):
            # The SDK hands over a ``data`` that is not a JSON object as it parsed it.
            raise _MalformedResponseError(
                "the stream event", f"is {reprlib.repr(event)}, not an object"
            )
        kind = optional_name(getattr(event, "type", None), "type")
        handler = _HANDLERS.get(kind or "")
        return handler(self, event) if handler is not None else []

    def end(self) -> list[StreamChunk]:
        if self._ending is None:
            return [stream_cut_short("no response.completed")]
        chunks: list[StreamChunk] = [*self._anchor_reasoning(), *self._blocks.end_all()]
        if self._usage is not None:
            chunks.append(UsageChunk(usage=self._usage))
        reason = self._ending
        if self._refusal:
            refusal = storable_text("".join(self._refusal))
            reason = ErrorFinish(
                failure=LlmFailure(
                    message=f"the model refused to answer: {refusal}",
                    code=stop_reason_code("refusal"),
                )
            )
        elif isinstance(reason, StopFinish) and self._blocks.has("tool-call"):
            reason = ToolCallsFinish()
        replay = None
        if self._reasoning and not isinstance(reason, ErrorFinish):
            replay = {"format": REPLAY_FORMAT, "reasoning": self._replay_entries()}
        chunks.append(FinishChunk(reason=reason, replay_state=replay))
        return chunks

    # -- output items ---------------------------------------------------------------

    def _item_added(self, event: Any) -> list[StreamChunk]:
        item = wire_object(event.item, "item")
        output = _item_key(event, getattr(item, "id", None), "item.id")
        item_type = optional_name(getattr(item, "type", None), "item.type")
        if item_type == "reasoning":
            reasoning = self._reasoning.setdefault(output, _ReasoningItem())
            reasoning.id = optional_name(getattr(item, "id", None), "item.id")
            return []
        if item_type == "function_call":
            block, start = self._blocks.start("tool-call")
            self._calls[output] = block
            arguments = optional_text(getattr(item, "arguments", None), "item.arguments")
            if arguments:
                self._streamed_arguments.add(output)
            call_id = optional_call_id(getattr(item, "call_id", None), "item.call_id")
            name = optional_name(getattr(item, "name", None), "item.name")
            if call_id and name:
                self._named_calls.add(output)
            call = self._blocks.append_tool_call(
                block, call_id=call_id, name=name, arguments=arguments or ""
            )
            return [start, call]
        return []

    def _item_done(self, event: Any) -> list[StreamChunk]:
        item = wire_object(event.item, "item")
        output = _item_key(event, getattr(item, "id", None), "item.id")
        item_type = optional_name(getattr(item, "type", None), "item.type")
        if item_type == "reasoning":
            return self._reasoning_done(output, item)
        if item_type == "function_call":
            return self._call_done(output, item)
        if item_type == "message":
            return self._message_done(output, item)
        return []

    def _call_done(self, output: ItemKey, item: Any) -> list[StreamChunk]:
        chunks: list[StreamChunk] = []
        block = self._calls.get(output)
        if block is None:
            block, start = self._blocks.start("tool-call")
            self._calls[output] = block
            chunks.append(start)
        arguments = None
        if output not in self._streamed_arguments:  # a server that sent no deltas
            arguments = optional_text(getattr(item, "arguments", None), "item.arguments")
        if arguments or output not in self._named_calls:
            call = self._blocks.append_tool_call(
                block,
                call_id=optional_call_id(getattr(item, "call_id", None), "item.call_id"),
                name=optional_name(getattr(item, "name", None), "item.name"),
                arguments=arguments or "",
            )
            chunks.append(call)
        return [*chunks, *self._blocks.end(block)]

    def _reasoning_done(self, output: ItemKey, item: Any) -> list[StreamChunk]:
        """The done item is the authoritative one: its encrypted content is complete
        (the added item's may not be). Text the server did not stream is taken from it."""
        reasoning = self._reasoning.setdefault(output, _ReasoningItem())
        reasoning.id = optional_name(getattr(item, "id", None), "item.id") or reasoning.id
        reasoning.encrypted = optional_name(
            getattr(item, "encrypted_content", None), "item.encrypted_content"
        )
        chunks: list[StreamChunk] = []
        if not reasoning.blocks:
            kinds: tuple[ReasoningPart, ...] = ("summary", "content")
            for kind in kinds:
                parts = items(getattr(item, kind, None), f"item.{kind}")
                for position, part in enumerate(parts):
                    where = f"item.{kind}[{position}]"
                    text = optional_text(getattr(wire_object(part, where), "text", None), where)
                    chunks.extend(self._reasoning_text(output, kind, position, text or ""))
        chunks.extend(self._anchor(reasoning))
        for block, _ in reasoning.blocks:
            chunks.extend(self._blocks.end(block))
        return chunks

    def _message_done(self, output: ItemKey, item: Any) -> list[StreamChunk]:
        chunks: list[StreamChunk] = []
        streamed = any(key[0] == output for key in self._texts)
        for position, part in enumerate(items(getattr(item, "content", None), "item.content")):
            where = f"item.content[{position}]"
            part = wire_object(part, where)
            if (
                not streamed
                and optional_name(getattr(part, "type", None), f"{where}.type") == "output_text"
            ):
                text = optional_text(getattr(part, "text", None), f"{where}.text")
                if text:
                    chunks.extend(self._text(output, position, text))
        for (text_output, _), block in self._texts.items():
            if text_output == output:
                chunks.extend(self._blocks.end(block))
        return chunks

    # -- deltas ---------------------------------------------------------------------

    def _text_delta(self, event: Any) -> list[StreamChunk]:
        output = _item_key(event, getattr(event, "item_id", None), "item_id")
        part = _part_index(getattr(event, "content_index", None), "content_index")
        return self._text(output, part, optional_text(event.delta, "delta") or "")

    def _text(self, output: ItemKey, part: int, text: str) -> list[StreamChunk]:
        chunks: list[StreamChunk] = []
        block = self._texts.get((output, part))
        if block is None:
            block, start = self._blocks.start("text")
            self._texts[output, part] = block
            chunks.append(start)
        return [*chunks, *self._blocks.append_text(block, text)]

    def _summary_part(self, event: Any) -> list[StreamChunk]:
        output = _item_key(event, getattr(event, "item_id", None), "item_id")
        part = _part_index(getattr(event, "summary_index", None), "summary_index")
        return self._reasoning_text(output, "summary", part)

    def _summary_delta(self, event: Any) -> list[StreamChunk]:
        output = _item_key(event, getattr(event, "item_id", None), "item_id")
        part = _part_index(getattr(event, "summary_index", None), "summary_index")
        return self._reasoning_text(output, "summary", part, optional_text(event.delta, "delta"))

    def _reasoning_delta(self, event: Any) -> list[StreamChunk]:
        output = _item_key(event, getattr(event, "item_id", None), "item_id")
        part = _part_index(getattr(event, "content_index", None), "content_index")
        return self._reasoning_text(output, "content", part, optional_text(event.delta, "delta"))

    def _reasoning_text(
        self, output: ItemKey, kind: ReasoningPart, part: int, text: str | None = None
    ) -> list[StreamChunk]:
        reasoning = self._reasoning.setdefault(output, _ReasoningItem())
        chunks: list[StreamChunk] = []
        block = reasoning.parts.get((kind, part))
        if block is None:
            block, start = self._blocks.start("reasoning")
            reasoning.parts[kind, part] = block
            reasoning.blocks.append((block, kind))
            chunks.append(start)
        return [*chunks, *self._blocks.append_text(block, text)] if text else chunks

    def _arguments_delta(self, event: Any) -> list[StreamChunk]:
        output = _item_key(event, getattr(event, "item_id", None), "item_id")
        arguments = optional_text(event.delta, "delta") or ""
        chunks: list[StreamChunk] = []
        block = self._calls.get(output)
        if block is None:
            block, start = self._blocks.start("tool-call")
            self._calls[output] = block
            chunks.append(start)
        self._streamed_arguments.add(output)
        return [*chunks, self._blocks.append_tool_call(block, arguments=arguments)]

    def _refusal_delta(self, event: Any) -> list[StreamChunk]:
        self._refusal.append(optional_text(event.delta, "delta") or "")
        return []

    # -- the end --------------------------------------------------------------------

    def _completed(self, event: Any) -> list[StreamChunk]:
        self._take_usage(event)
        self._ending = StopFinish()
        return []

    def _incomplete(self, event: Any) -> list[StreamChunk]:
        self._ending = incomplete_finish(self._take_usage(event))
        return []

    def _failed(self, event: Any) -> list[StreamChunk]:
        return [error_finish(response_failure(wire_object(event.response, "response")))]

    def _error(self, event: Any) -> list[StreamChunk]:
        return [error_finish(error_event_failure(event))]

    def _take_usage(self, event: Any) -> Any:
        """Keep the response's usage; returns the response."""
        response = wire_object(event.response, "response")
        usage = getattr(response, "usage", None)
        if usage is not None:
            self._usage = usage_from_wire(wire_object(usage, "response.usage"))
        return response

    def _anchor(self, reasoning: _ReasoningItem) -> list[StreamChunk]:
        """One empty reasoning block for an item that has none."""
        if reasoning.blocks:
            return []
        block, start = self._blocks.start("reasoning")
        reasoning.blocks.append((block, "empty"))
        return [start]

    def _anchor_reasoning(self) -> list[StreamChunk]:
        """Anchors for reasoning items the stream never finished."""
        return [chunk for item in self._reasoning.values() for chunk in self._anchor(item)]

    def _replay_entries(self) -> list[dict[str, Any]]:
        """One entry per reasoning item, in the order of their blocks."""
        entries = []
        for item in sorted(self._reasoning.values(), key=lambda item: item.blocks[0][0]):
            entry: dict[str, Any] = {"blocks": [kind for _, kind in item.blocks]}
            if item.id is not None:
                entry["id"] = item.id
            if item.encrypted is not None:
                entry["encryptedContent"] = item.encrypted
            entries.append(entry)
        return entries


_HANDLERS = {
    "response.output_item.added": ResponsesStreamTranslator._item_added,
    "response.output_item.done": ResponsesStreamTranslator._item_done,
    "response.output_text.delta": ResponsesStreamTranslator._text_delta,
    "response.reasoning_summary_part.added": ResponsesStreamTranslator._summary_part,
    "response.reasoning_summary_text.delta": ResponsesStreamTranslator._summary_delta,
    "response.reasoning_text.delta": ResponsesStreamTranslator._reasoning_delta,
    "response.function_call_arguments.delta": ResponsesStreamTranslator._arguments_delta,
    "response.refusal.delta": ResponsesStreamTranslator._refusal_delta,
    "response.completed": ResponsesStreamTranslator._completed,
    "response.incomplete": ResponsesStreamTranslator._incomplete,
    "response.failed": ResponsesStreamTranslator._failed,
    "error": ResponsesStreamTranslator._error,
}
"""The events that matter, by ``type``; all others (``response.created``, part and
``.done`` events, hosted tools' progress, ...) add nothing."""


__all__ = [
    "ResponsesStreamTranslator",
]
