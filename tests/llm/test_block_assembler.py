"""BlockAssembler: from a chunk stream to the assistant message it describes."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

import pytest

from dsh_llm import (
    AssistantMessage,
    BlockAssembler,
    ErrorFinish,
    ImageBlock,
    LlmError,
    LlmFailure,
    ReasoningBlock,
    StopFinish,
    StreamChunk,
    StreamChunkAdapter,
    TextBlock,
    TokenUsage,
    ToolCallBlock,
)


def _assemble(chunks: Iterable[dict[str, Any]]) -> BlockAssembler:
    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.push(StreamChunkAdapter.validate_python(chunk))
    return assembler


def _message(chunks: Iterable[dict[str, Any]]) -> AssistantMessage:
    return _assemble(chunks).message(provider="p", model="m")


_STOP = {"type": "finish", "reason": {"kind": "stop"}}


def _text_delta(index: int, text: str) -> dict[str, Any]:
    return {"type": "text-delta", "index": index, "text": text}


def test_full_stream_assembles_blocks_in_order() -> None:
    message = _message(
        [
            {"type": "block-start", "index": 0, "blockType": "reasoning"},
            {"type": "reasoning-delta", "index": 0, "text": "let me "},
            {"type": "reasoning-delta", "index": 0, "text": "think"},
            {
                "type": "block-end",
                "index": 0,
                "block": {"type": "reasoning", "text": "let me think"},
            },
            {"type": "block-start", "index": 1, "blockType": "text"},
            {"type": "text-delta", "index": 1, "text": "Hi"},
            {"type": "block-end", "index": 1, "block": {"type": "text", "text": "Hi"}},
            _STOP,
        ]
    )

    assert message.content == (ReasoningBlock(text="let me think"), TextBlock(text="Hi"))


def test_message_gets_the_id_minted_when_the_stream_started_and_model_source() -> None:
    assembler = _assemble([{"type": "text-delta", "index": 0, "text": "x"}, _STOP])
    other = _assemble([{"type": "text-delta", "index": 0, "text": "x"}, _STOP])

    first = assembler.message(provider="deepseek", model="deepseek-chat")
    second = other.message(provider="deepseek", model="deepseek-chat")

    assert uuid.UUID(first.id).version == 7
    assert first.id == assembler.message_id  # known to live observers before the finish
    assert first.id != second.id  # each stream mints its own
    assert first.source.provider == "deepseek"
    assert first.source.model == "deepseek-chat"
    assert first.source.replay_state is None


def test_replay_state_comes_from_the_finish_chunk() -> None:
    message = _message(
        [
            {"type": "text-delta", "index": 0, "text": "x"},
            {"type": "finish", "reason": {"kind": "stop"}, "replayState": {"sig": ["a"]}},
        ]
    )

    assert message.source.replay_state == {"sig": ("a",)}


def test_blocks_appear_in_first_seen_index_order() -> None:
    message = _message(
        [
            {"type": "block-start", "index": 5, "blockType": "text"},
            {"type": "block-start", "index": 2, "blockType": "reasoning"},
            {"type": "reasoning-delta", "index": 2, "text": "r"},
            {"type": "text-delta", "index": 5, "text": "t"},
            _STOP,
        ]
    )

    assert message.content == (TextBlock(text="t"), ReasoningBlock(text="r"))


def test_delta_only_stream_still_assembles() -> None:
    message = _message(
        [
            {"type": "text-delta", "index": 0, "text": "Hel"},
            {"type": "text-delta", "index": 0, "text": "lo"},
            {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "add"},
            {"type": "tool-call-delta", "index": 1, "id": "c1", "argumentsDelta": '{"a":'},
            {"type": "tool-call-delta", "index": 1, "id": "c1", "argumentsDelta": " 1}"},
            {"type": "finish", "reason": {"kind": "tool-calls"}},
        ]
    )

    assert message.content == (
        TextBlock(text="Hello"),
        ToolCallBlock(call_id="c1", name="add", arguments='{"a": 1}'),
    )


def test_block_end_is_authoritative_and_later_chunks_for_it_are_ignored() -> None:
    message = _message(
        [
            {"type": "text-delta", "index": 0, "text": "draft"},
            {"type": "block-end", "index": 0, "block": {"type": "text", "text": "final"}},
            {"type": "text-delta", "index": 0, "text": " late"},
            {"type": "block-start", "index": 0, "blockType": "text"},
            {"type": "block-end", "index": 0, "block": {"type": "text", "text": "re-closed"}},
            _STOP,
        ]
    )

    assert message.content == (TextBlock(text="final"),)


def test_block_end_alone_carries_any_block_type() -> None:
    image = {"type": "image", "mediaType": "image/png", "url": "https://x/i.png"}
    message = _message([{"type": "block-end", "index": 0, "block": image}, _STOP])

    assert message.content == (ImageBlock(media_type="image/png", url="https://x/i.png"),)


def test_open_tool_call_falls_back_to_a_call_id_from_its_index_and_an_empty_name() -> None:
    message = _message(
        [
            {"type": "block-start", "index": 3, "blockType": "tool-call"},
            {"type": "finish", "reason": {"kind": "tool-calls"}},
        ]
    )

    assert message.content == (ToolCallBlock(call_id="call-3", name="", arguments=""),)


def test_tool_call_id_last_one_wins_and_name_is_kept_once_known() -> None:
    message = _message(
        [
            {"type": "tool-call-delta", "index": 0, "id": "tmp", "name": "f"},
            {"type": "tool-call-delta", "index": 0, "id": "real", "argumentsDelta": "{}"},
            _STOP,
        ]
    )

    assert message.content == (ToolCallBlock(call_id="real", name="f", arguments="{}"),)


def test_open_block_of_a_type_that_cannot_be_built_from_deltas_is_an_error() -> None:
    assembler = _assemble([{"type": "block-start", "index": 0, "blockType": "image"}, _STOP])

    with pytest.raises(LlmError, match="block 0"):
        assembler.message(provider="p", model="m")


def test_delta_of_the_wrong_type_for_an_open_block_is_an_error() -> None:
    assembler = _assemble([{"type": "block-start", "index": 0, "blockType": "tool-call"}])

    with pytest.raises(LlmError, match="block 0"):
        assembler.push(StreamChunkAdapter.validate_python(_text_delta(0, "x")))


def test_finish_defaults_to_stop() -> None:
    assembler = _assemble([_text_delta(0, "x")])

    assert assembler.finish is None
    assert assembler.message(provider="p", model="m").content == (TextBlock(text="x"),)


def test_usage_and_finish_last_one_wins() -> None:
    assembler = _assemble(
        [
            {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 1}},
            {"type": "usage", "usage": {"inputTokens": 5, "outputTokens": 7}},
            {"type": "finish", "reason": {"kind": "tool-calls"}},
            _STOP,
        ]
    )

    assert assembler.usage == TokenUsage(input_tokens=5, output_tokens=7)
    assert assembler.finish == StopFinish()


def test_max_tokens_drops_tool_calls_and_the_replay_state() -> None:
    message = _message(
        [
            _text_delta(0, "partial answer"),
            {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "f", "argumentsDelta": "{"},
            {"type": "finish", "reason": {"kind": "max-tokens"}, "replayState": {"s": 1}},
        ]
    )

    assert message.content == (TextBlock(text="partial answer"),)
    assert message.source.replay_state is None


def test_max_tokens_without_tool_calls_keeps_the_replay_state() -> None:
    message = _message(
        [
            _text_delta(0, "x"),
            {"type": "finish", "reason": {"kind": "max-tokens"}, "replayState": 1},
        ]
    )

    assert message.source.replay_state == 1


def test_failed_stream_produces_no_message() -> None:
    failure = {"message": "overloaded", "code": "RATE_LIMIT"}
    assembler = _assemble(
        [_text_delta(0, "x"), {"type": "finish", "reason": {"kind": "error", "failure": failure}}]
    )

    assert assembler.finish == ErrorFinish(failure=LlmFailure(**failure))
    with pytest.raises(LlmError, match="RATE_LIMIT"):
        assembler.message(provider="p", model="m")


def test_successful_finish_with_no_content_still_creates_a_message() -> None:
    message = _message([_STOP])

    assert message.content == ()


def test_interrupted_message_keeps_non_blank_text_and_reasoning_only() -> None:
    assembler = _assemble(
        [
            {"type": "block-start", "index": 0, "blockType": "reasoning"},
            {"type": "reasoning-delta", "index": 0, "text": "thinking"},
            {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "thinking"}},
            _text_delta(1, "   \n"),
            {"type": "tool-call-delta", "index": 2, "id": "c1", "name": "f"},
            _text_delta(3, "half a sent"),
        ]
    )

    message = assembler.interrupted_message(provider="p", model="m")

    assert message is not None
    assert message.content == (ReasoningBlock(text="thinking"), TextBlock(text="half a sent"))
    assert message.source.replay_state is None


def test_interrupted_message_is_none_when_nothing_worth_keeping_arrived() -> None:
    assembler = _assemble(
        [_text_delta(0, "  "), {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "f"}]
    )

    assert assembler.interrupted_message(provider="p", model="m") is None
    assert BlockAssembler().interrupted_message(provider="p", model="m") is None


def test_blocks_show_the_stream_so_far() -> None:
    assembler = BlockAssembler()
    chunks: list[StreamChunk] = [
        StreamChunkAdapter.validate_python(_text_delta(0, "a")),
        StreamChunkAdapter.validate_python(_text_delta(0, "b")),
    ]
    for chunk in chunks:
        assembler.push(chunk)

    assert assembler.blocks == (TextBlock(text="ab"),)
