"""The OpenAI-compatible adapter against llama.cpp's real server and a scripted model."""

from __future__ import annotations

from typing import Any

from dsh_llm import (
    BlockEndChunk,
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    MaxTokensFinish,
    StopFinish,
    StreamChunk,
    TextDeltaChunk,
    ToolCallBlock,
    ToolCallDeltaChunk,
    ToolCallsFinish,
    ToolSchema,
    UsageChunk,
    create_user_message,
)
from dsh_llm.providers import OpenAIChatAdapter
from real_llm.tiny_model import PLAIN_REPLY

ADD = ToolSchema(
    name="add",
    description="Add two integers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


async def _stream(adapter: OpenAIChatAdapter, text: str, **options: Any) -> list[StreamChunk]:
    request = GenerateRequest(
        provider="llamacpp",
        model="tiny",
        messages=(create_user_message(content=text, source={"kind": "user"}),),
        **options,
    )
    return [chunk async for chunk in adapter.stream(request)]


def _finish(chunks: list[StreamChunk]) -> FinishChunk:
    assert isinstance(chunks[-1], FinishChunk), chunks
    return chunks[-1]


def _usage(chunks: list[StreamChunk]) -> UsageChunk:
    (usage,) = [chunk for chunk in chunks if isinstance(chunk, UsageChunk)]
    return usage


async def test_text_streams_in_pieces_and_stops(adapter: OpenAIChatAdapter) -> None:
    chunks = await _stream(adapter, "hi")

    deltas = [chunk.text for chunk in chunks if isinstance(chunk, TextDeltaChunk)]
    assert len(deltas) > 1
    assert "".join(deltas) == PLAIN_REPLY
    ends = [chunk.block for chunk in chunks if isinstance(chunk, BlockEndChunk)]
    assert [block.model_dump() for block in ends] == [{"type": "text", "text": PLAIN_REPLY}]
    assert _finish(chunks).reason == StopFinish()
    assert _usage(chunks).usage.output_tokens == len(deltas) + 1  # + the end-of-turn token


async def test_max_tokens_cuts_the_reply_and_says_so(adapter: OpenAIChatAdapter) -> None:
    chunks = await _stream(adapter, "hi", max_tokens=2)

    assert "".join(c.text for c in chunks if isinstance(c, TextDeltaChunk)) == "Hello from"
    assert _finish(chunks).reason == MaxTokensFinish()
    assert _usage(chunks).usage.output_tokens == 2


async def test_a_repeated_prompt_reports_cached_input_tokens(adapter: OpenAIChatAdapter) -> None:
    prompt = "hi, say the usual"
    await _stream(adapter, prompt)

    usage = _usage(await _stream(adapter, prompt)).usage

    assert usage.cache_read_tokens is not None
    assert usage.cache_read_tokens > usage.input_tokens > 0


async def test_a_tool_call_streams_as_argument_deltas(adapter: OpenAIChatAdapter) -> None:
    chunks = await _stream(adapter, "please calc 2+3", tools=(ADD,))

    deltas = [chunk for chunk in chunks if isinstance(chunk, ToolCallDeltaChunk)]
    assert len(deltas) > 1
    assert {delta.name for delta in deltas} == {"add"}
    assert "".join(delta.arguments_delta for delta in deltas) == '{"a": 2, "b": 3}'
    (end,) = [chunk.block for chunk in chunks if isinstance(chunk, BlockEndChunk)]
    assert isinstance(end, ToolCallBlock)
    assert (end.name, end.arguments, end.call_id) == ("add", '{"a": 2, "b": 3}', deltas[0].call_id)
    assert _finish(chunks).reason == ToolCallsFinish()


async def test_a_prompt_over_the_context_ends_in_an_llm_failure(
    adapter: OpenAIChatAdapter,
) -> None:
    chunks = await _stream(adapter, "x " * 3000)

    (finish,) = chunks
    assert isinstance(finish, FinishChunk)
    assert isinstance(finish.reason, ErrorFinish)
    failure = finish.reason.failure
    assert (failure.code, failure.status) == ("CONTEXT_WINDOW_EXCEEDED", 400)
    assert "exceeds the available context size" in failure.message
