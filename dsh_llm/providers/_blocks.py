"""Content blocks under construction while a provider streams.

Providers number their stream parts in their own ways (OpenAI by tool-call index and
by field, Anthropic by content-block index, with parts that are not content). This
keeps the dsh side uniform: content indices are handed out in first-seen order from
0, every delta is also accumulated, and closing a block emits the authoritative
``block-end`` that the assembler takes as final. Streamed text goes through a
:class:`SurrogateJoiner` per block, so no delta and no block holds a lone surrogate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from dsh_llm._content import ContentBlock, ReasoningBlock, TextBlock, ToolCallBlock
from dsh_llm._ids import CallId
from dsh_llm._stream import (
    BlockEndChunk,
    BlockStartChunk,
    ReasoningDeltaChunk,
    StreamChunk,
    TextDeltaChunk,
    ToolCallDeltaChunk,
)
from dsh_llm.providers._surrogates import SurrogateJoiner

StreamedBlockType: TypeAlias = Literal["text", "reasoning", "tool-call"]


@dataclass
class _Partial:
    block_type: StreamedBlockType
    parts: list[str] = field(default_factory=list)
    joiner: SurrogateJoiner = field(default_factory=SurrogateJoiner)
    call_id: CallId | None = None
    name: str | None = None
    closed: bool = False


class BlockBuilder:
    """The blocks of one response, in first-seen order."""

    def __init__(self) -> None:
        self._blocks: list[_Partial] = []

    def start(self, block_type: StreamedBlockType) -> tuple[int, BlockStartChunk]:
        """Open the next block; returns its index and the ``block-start`` chunk."""
        self._blocks.append(_Partial(block_type))
        index = len(self._blocks) - 1
        return index, BlockStartChunk(index=index, block_type=block_type)

    def append_text(self, index: int, text: str) -> list[StreamChunk]:
        """Add text to an open text or reasoning block: its delta chunk, or none
        while the text is only a held-back surrogate half."""
        partial = self._blocks[index]
        storable = partial.joiner.feed(text)
        return [self._text_delta(index, partial, storable)] if storable else []

    def append_tool_call(
        self,
        index: int,
        *,
        call_id: CallId | None = None,
        name: str | None = None,
        arguments: str = "",
    ) -> ToolCallDeltaChunk:
        """Add to an open tool-call block: its id and name once known, and the next
        piece of the raw arguments text. Until the provider names the call, it goes
        by ``call-<index>``."""
        partial = self._blocks[index]
        partial.call_id = call_id or partial.call_id
        partial.name = name or partial.name
        return self._arguments_delta(index, partial, partial.joiner.feed(arguments))

    def end(self, index: int) -> list[StreamChunk]:
        """Close a block: the delta of a surrogate half it still held (as U+FFFD),
        then its complete value. Nothing if it was already closed."""
        partial = self._blocks[index]
        if partial.closed:
            return []
        partial.closed = True
        chunks: list[StreamChunk] = []
        rest = partial.joiner.flush()
        if rest and partial.block_type == "tool-call":
            chunks.append(self._arguments_delta(index, partial, rest))
        elif rest:
            chunks.append(self._text_delta(index, partial, rest))
        chunks.append(BlockEndChunk(index=index, block=self._block(index, partial)))
        return chunks

    def end_all(self) -> list[StreamChunk]:
        """Close every block still open, in index order."""
        return [chunk for index in range(len(self._blocks)) for chunk in self.end(index)]

    def type_of(self, index: int) -> StreamedBlockType:
        return self._blocks[index].block_type

    def has(self, block_type: StreamedBlockType) -> bool:
        """Whether any block of this type was streamed."""
        return any(partial.block_type == block_type for partial in self._blocks)

    @staticmethod
    def _text_delta(
        index: int, partial: _Partial, text: str
    ) -> TextDeltaChunk | ReasoningDeltaChunk:
        partial.parts.append(text)
        if partial.block_type == "reasoning":
            return ReasoningDeltaChunk(index=index, text=text)
        return TextDeltaChunk(index=index, text=text)

    @staticmethod
    def _arguments_delta(index: int, partial: _Partial, arguments: str) -> ToolCallDeltaChunk:
        partial.parts.append(arguments)
        return ToolCallDeltaChunk(
            index=index,
            call_id=CallId(partial.call_id or f"call-{index}"),
            name=partial.name,
            arguments_delta=arguments,
        )

    @staticmethod
    def _block(index: int, partial: _Partial) -> ContentBlock:
        text = "".join(partial.parts)
        if partial.block_type == "text":
            return TextBlock(text=text)
        if partial.block_type == "reasoning":
            return ReasoningBlock(text=text)
        return ToolCallBlock(
            call_id=CallId(partial.call_id or f"call-{index}"),
            name=partial.name or "",
            arguments=text,
        )


__all__ = [
    "BlockBuilder",
    "StreamedBlockType",
]
