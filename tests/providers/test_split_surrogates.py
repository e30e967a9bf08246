"""Surrogate halves on the wire never reach dsh values.

A JSON string may escape a character outside the BMP as two UTF-16 halves, and a
server may send those halves in two deltas ("\\ud83d" in one, "\\ude00" in the next).
Each half alone is a lone surrogate, which no store can encode as UTF-8. The adapters
join a pair split across deltas and replace a half without its partner with U+FFFD,
in text, reasoning and tool-call arguments, through their official clients and a
local server that sends the halves as raw JSON escapes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from dsh_llm import (
    BlockEndChunk,
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    ModelAdapter,
    ReasoningDeltaChunk,
    StreamChunk,
    StreamChunkAdapter,
    TextDeltaChunk,
    ToolCallBlock,
    ToolCallDeltaChunk,
    create_user_message,
)
from dsh_llm.providers import (
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    adapter_for,
)
from providers.frames import (
    CHAT_DONE,
    block_delta,
    block_start,
    block_stop,
    chat_chunk,
    message_end,
    message_start,
    responses_arguments_delta,
    responses_call,
    responses_completed,
    responses_created,
    responses_item_added,
    responses_item_done,
    responses_reasoning,
    responses_summary_delta,
    responses_text_delta,
)
from providers.gemini_frames import gemini_chunk
from providers.http_stub import StubServer, json_reply, sse_reply

HIGH, LOW = "\ud83d", "\ude00"
"""The two halves of U+1F600 (😀)."""

SPLITS = {
    "pair split across deltas": (["a" + HIGH, LOW + "b"], "a\U0001f600b"),
    "delta holding only a high half": ([HIGH, LOW], "\U0001f600"),
    "lone low half": (["a" + LOW + "b"], "a\ufffdb"),
    "high half followed by another character": (["a" + HIGH, "b"], "a\ufffdb"),
    "high half at the end of the stream": (["a" + HIGH], "a\ufffd"),
    "two high halves then a low": ([HIGH + HIGH, LOW], "\ufffd\U0001f600"),
}

StreamField = Callable[[list[str]], list[bytes]]


def openai_frames(field: str) -> StreamField:
    def frames(parts: list[str]) -> list[bytes]:
        if field == "arguments":
            opening = {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": ""}}
            deltas = [chat_chunk({"tool_calls": [opening]})] + [
                chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
                for part in parts
            ]
        else:
            deltas = [chat_chunk({field: part}) for part in parts]
        return [*deltas, chat_chunk({}, finish_reason="stop"), CHAT_DONE]

    return frames


def anthropic_frames(field: str) -> StreamField:
    kinds: dict[str, tuple[dict[str, Any], str | None]] = {
        "text": ({"type": "text", "text": ""}, "text_delta"),
        "thinking": ({"type": "thinking", "thinking": "", "signature": ""}, "thinking_delta"),
        "partial_json": ({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}, None),
    }
    block, delta_type = kinds[field]

    def frames(parts: list[str]) -> list[bytes]:
        kind = delta_type or "input_json_delta"
        return [
            message_start(),
            block_start(0, block),
            *(block_delta(0, {"type": kind, field: part}) for part in parts),
            block_stop(0),
            *message_end("end_turn"),
        ]

    return frames


def responses_frames(field: str) -> StreamField:
    def frames(parts: list[str]) -> list[bytes]:
        if field == "arguments":
            item = responses_call("call_1", "f", "", status="in_progress")
            deltas = [responses_arguments_delta(0, part) for part in parts]
        elif field == "summary":
            item = responses_reasoning("rs_1", [])
            deltas = [responses_summary_delta(0, 0, part) for part in parts]
        else:
            item = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
            deltas = [responses_text_delta(0, part) for part in parts]
        return [
            responses_created(),
            responses_item_added(0, item),
            *deltas,
            responses_item_done(0, item),
            responses_completed(),
        ]

    return frames


def gemini_frames(thought: bool) -> StreamField:
    def frames(parts: list[str]) -> list[bytes]:
        marks = {"thought": True} if thought else {}
        chunks = [gemini_chunk({"text": part, **marks}) for part in parts]
        return [*chunks, gemini_chunk(finish_reason="STOP")]

    return frames


def openai_adapter(stub: StubServer) -> ModelAdapter:
    return OpenAIChatAdapter(base_url=f"{stub.url}/v1", api_key="k", max_retries=0)


def anthropic_adapter(stub: StubServer) -> ModelAdapter:
    return AnthropicAdapter(base_url=stub.url, api_key="k", max_retries=0)


def responses_adapter(stub: StubServer) -> ModelAdapter:
    return OpenAIResponsesAdapter(base_url=f"{stub.url}/v1", api_key="k", max_retries=0)


def gemini_adapter(stub: StubServer) -> ModelAdapter:
    return GeminiAdapter(base_url=stub.url, api_key="k", max_retries=0)


def ollama_adapter(stub: StubServer) -> ModelAdapter:
    return adapter_for("ollama:m", base_url=f"{stub.url}/v1")


FIELDS: dict[str, tuple[Callable[[StubServer], ModelAdapter], StreamField]] = {
    "openai content": (openai_adapter, openai_frames("content")),
    "openai reasoning_content": (openai_adapter, openai_frames("reasoning_content")),
    "openai tool arguments": (openai_adapter, openai_frames("arguments")),
    "anthropic text": (anthropic_adapter, anthropic_frames("text")),
    "anthropic thinking": (anthropic_adapter, anthropic_frames("thinking")),
    "anthropic input_json": (anthropic_adapter, anthropic_frames("partial_json")),
    "responses output_text": (responses_adapter, responses_frames("text")),
    "responses reasoning summary": (responses_adapter, responses_frames("summary")),
    "responses function arguments": (responses_adapter, responses_frames("arguments")),
    "gemini text": (gemini_adapter, gemini_frames(thought=False)),
    "gemini thought": (gemini_adapter, gemini_frames(thought=True)),
    "ollama content": (ollama_adapter, openai_frames("content")),
    "ollama reasoning": (ollama_adapter, openai_frames("reasoning")),
}


async def stream(adapter: ModelAdapter) -> list[StreamChunk]:
    question = create_user_message(content="hi", source={"kind": "user"})
    request = GenerateRequest(provider="p", model="m", messages=(question,))
    return [chunk async for chunk in adapter.stream(request)]


def assert_storable(chunks: list[StreamChunk]) -> None:
    """Every chunk encodes as UTF-8 JSON, which a lone surrogate cannot."""
    for chunk in chunks:
        wire: Any = StreamChunkAdapter.dump_python(chunk, mode="json")
        json.dumps(wire, ensure_ascii=False).encode("utf-8")


def streamed_text(chunks: list[StreamChunk]) -> str:
    return "".join(
        chunk.arguments_delta if isinstance(chunk, ToolCallDeltaChunk) else chunk.text
        for chunk in chunks
        if isinstance(chunk, TextDeltaChunk | ReasoningDeltaChunk | ToolCallDeltaChunk)
    )


def block_text(chunks: list[StreamChunk]) -> str:
    [end] = [chunk for chunk in chunks if isinstance(chunk, BlockEndChunk)]
    block = end.block
    return block.arguments if isinstance(block, ToolCallBlock) else getattr(block, "text", "")


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("split", SPLITS)
async def test_surrogate_halves_become_whole_characters_or_replacements(
    stub: StubServer, field: str, split: str
) -> None:
    make_adapter, frames = FIELDS[field]
    parts, expected = SPLITS[split]
    stub.script(sse_reply(frames(parts)))

    chunks = await stream(make_adapter(stub))

    assert_storable(chunks)
    assert isinstance(chunks[-1], FinishChunk)
    assert block_text(chunks) == expected
    assert streamed_text(chunks) == expected


async def test_openai_call_id_and_name_with_lone_surrogates_are_replaced(
    stub: StubServer,
) -> None:
    call = {"index": 0, "id": "call_" + LOW, "function": {"name": "f" + HIGH, "arguments": "{}"}}
    stub.script(
        sse_reply([chat_chunk({"tool_calls": [call]}, finish_reason="tool_calls"), CHAT_DONE])
    )

    chunks = await stream(openai_adapter(stub))

    assert_storable(chunks)
    [end] = [chunk for chunk in chunks if isinstance(chunk, BlockEndChunk)]
    assert end.block == ToolCallBlock(call_id="call_\ufffd", name="f\ufffd", arguments="{}")


async def test_anthropic_signature_with_a_lone_surrogate_is_replaced(stub: StubServer) -> None:
    thinking = {"type": "thinking", "thinking": "hm", "signature": ""}
    stub.script(
        sse_reply(
            [
                message_start(),
                block_start(0, thinking),
                block_delta(0, {"type": "signature_delta", "signature": "sig" + HIGH}),
                block_stop(0),
                *message_end("end_turn"),
            ]
        )
    )

    chunks = await stream(anthropic_adapter(stub))

    assert_storable(chunks)
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk)
    assert finish.replay_state == {
        "format": "anthropic-messages",
        "thinking": ({"type": "thinking", "signature": "sig\ufffd"},),
    }


@pytest.mark.parametrize(
    "make_adapter",
    [openai_adapter, anthropic_adapter, responses_adapter, gemini_adapter, ollama_adapter],
)
async def test_an_error_message_with_a_lone_surrogate_is_replaced(
    stub: StubServer, make_adapter: Callable[[StubServer], ModelAdapter]
) -> None:
    stub.script(json_reply(400, {"error": {"message": "bad " + LOW, "type": "invalid"}}))

    chunks = await stream(make_adapter(stub))

    assert_storable(chunks)
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk)
    assert isinstance(finish.reason, ErrorFinish)
    assert "bad \ufffd" in finish.reason.failure.message
