"""Turns a model's chunk stream into the assistant message it describes.

Partial blocks are kept by ``index`` in first-seen order. Deltas grow an open block;
the first ``block-end`` for an index is authoritative and closes it (later deltas and
re-closes for that index are ignored), so delta-only streams and block-end-only
streams both assemble. The assistant message is *created* here, when the stream
finishes, under the id the assembler minted when the stream started
(:attr:`BlockAssembler.message_id`), so that a live observer can key the streaming
deltas by the id the committed message will carry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dsh_llm._content import ContentBlock, ReasoningBlock, TextBlock, ToolCallBlock
from dsh_llm._create import _create_assistant
from dsh_llm._frozen_json import FrozenJson
from dsh_llm._ids import CallId, MessageId, new_message_id
from dsh_llm._messages import AssistantMessage
from dsh_llm._stream import (
    AbortedFinish,
    BlockEndChunk,
    BlockStartChunk,
    BlockType,
    ErrorFinish,
    FinishChunk,
    FinishReason,
    ReasoningDeltaChunk,
    StopFinish,
    StreamChunk,
    TextDeltaChunk,
    TokenUsage,
    ToolCallDeltaChunk,
    UsageChunk,
)
from dsh_llm.errors import LlmError

_STOP = StopFinish()


@dataclass
class _OpenBlock:
    """A block still streaming: its type and what the deltas delivered so far."""

    index: int
    block_type: BlockType
    text: list[str] = field(default_factory=list)
    call_id: CallId | None = None
    name: str | None = None

    def build(self) -> ContentBlock:
        if self.block_type == "text":
            return TextBlock(text="".join(self.text))
        if self.block_type == "reasoning":
            return ReasoningBlock(text="".join(self.text))
        if self.block_type == "tool-call":
            return ToolCallBlock(
                call_id=self.call_id or f"call-{self.index}",
                name=self.name or "",
                arguments="".join(self.text),
            )
        raise LlmError(
            f"block {self.index} ({self.block_type}) was never closed by a block-end chunk; "
            "only text, reasoning and tool-call blocks can be assembled from deltas"
        )


class BlockAssembler:
    """Accumulates one model stream. ``push`` every chunk in order, then call
    :meth:`message` after the finish (or :meth:`interrupted_message` when the
    stream was cancelled)."""

    def __init__(self) -> None:
        self.message_id: MessageId = new_message_id()
        """The id of the message this stream becomes; each assembler mints its own."""
        self._blocks: dict[int, _OpenBlock | ContentBlock] = {}
        self._usage: TokenUsage | None = None
        self._finish: FinishChunk | None = None

    @property
    def usage(self) -> TokenUsage | None:
        """The last usage reported, if any."""
        return self._usage

    @property
    def finish(self) -> FinishReason | None:
        """The finish reason received, or ``None`` while the stream has not finished."""
        return None if self._finish is None else self._finish.reason

    @property
    def replay_state(self) -> FrozenJson | None:
        """The provider state carried by the finish chunk, if any."""
        return None if self._finish is None else self._finish.replay_state

    @property
    def blocks(self) -> tuple[ContentBlock, ...]:
        """Every block so far, in first-seen index order; open blocks as assembled
        from their deltas."""
        return tuple(
            block.build() if isinstance(block, _OpenBlock) else block
            for block in self._blocks.values()
        )

    def push(self, chunk: StreamChunk) -> None:
        """Take the next chunk of the stream."""
        if isinstance(chunk, TextDeltaChunk):
            self._append_text(chunk.index, "text", chunk.text)
        elif isinstance(chunk, ReasoningDeltaChunk):
            self._append_text(chunk.index, "reasoning", chunk.text)
        elif isinstance(chunk, ToolCallDeltaChunk):
            block = self._open(chunk.index, "tool-call")
            if block is not None:
                block.call_id = chunk.call_id
                if chunk.name is not None:
                    block.name = chunk.name
                block.text.append(chunk.arguments_delta)
        elif isinstance(chunk, BlockStartChunk):
            self._open(chunk.index, chunk.block_type)
        elif isinstance(chunk, BlockEndChunk):
            if not self._is_closed(chunk.index):
                self._blocks[chunk.index] = chunk.block
        elif isinstance(chunk, UsageChunk):
            self._usage = chunk.usage
        elif isinstance(chunk, FinishChunk):
            self._finish = chunk
        else:
            raise LlmError(f"unknown stream chunk {type(chunk).__name__}")

    def message(self, *, provider: str, model: str) -> AssistantMessage:
        """Create the assistant message of a finished stream (a missing finish counts
        as ``stop``). Its source carries the finish chunk's replay state. On
        ``max-tokens`` the tool calls are dropped, and with them the replay state,
        whose shape only the provider knows. Raises :class:`LlmError` when the stream
        ended in ``error`` or ``aborted``: a failed call produces no message."""
        reason = self.finish or _STOP
        if isinstance(reason, (ErrorFinish, AbortedFinish)):
            raise LlmError(
                f"the stream ended with {reason.kind!r} ({reason.failure.code}: "
                f"{reason.failure.message}); it produced no assistant message"
            )
        content = self.blocks
        replay_state = self.replay_state
        if reason.kind == "max-tokens":
            kept = tuple(block for block in content if not isinstance(block, ToolCallBlock))
            if len(kept) != len(content):
                content, replay_state = kept, None
        source: dict[str, object] = {"provider": provider, "model": model}
        if replay_state is not None:
            source["replay_state"] = replay_state
        return _create_assistant(self.message_id, content, source)

    def interrupted_message(self, *, provider: str, model: str) -> AssistantMessage | None:
        """Create the message for a cancelled stream: the text and reasoning blocks
        (closed or open) whose text is not blank, without tool calls or replay state;
        ``None`` when nothing worth keeping arrived."""
        kept: list[ContentBlock] = []
        for block in self._blocks.values():
            if isinstance(block, _OpenBlock):
                if block.block_type not in ("text", "reasoning"):
                    continue
                block = block.build()
            if isinstance(block, (TextBlock, ReasoningBlock)) and block.text.strip():
                kept.append(block)
        if not kept:
            return None
        return _create_assistant(
            self.message_id, tuple(kept), {"provider": provider, "model": model}
        )

    def _is_closed(self, index: int) -> bool:
        block = self._blocks.get(index)
        return block is not None and not isinstance(block, _OpenBlock)

    def _open(self, index: int, block_type: BlockType) -> _OpenBlock | None:
        """The open block at ``index`` (created on first sight), or ``None`` when that
        block is already closed. A delta of another block type is a stream error."""
        block = self._blocks.get(index)
        if block is None:
            block = self._blocks[index] = _OpenBlock(index, block_type)
            return block
        if not isinstance(block, _OpenBlock):
            return None
        if block.block_type != block_type:
            raise LlmError(
                f"stream chunk for block {index} expects a {block_type} block, "
                f"but block {index} is a {block.block_type} block"
            )
        return block

    def _append_text(self, index: int, block_type: BlockType, text: str) -> None:
        block = self._open(index, block_type)
        if block is not None:
            block.text.append(text)


__all__ = [
    "BlockAssembler",
]
