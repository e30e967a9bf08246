"""The test adapters stream realistic chunks, record requests, fail as real adapters
do (a terminal ``finish {error}``) and can be cancelled mid-stream."""

from __future__ import annotations

import asyncio
import json

import pytest

from dsh_llm import (
    BlockAssembler,
    BlockEndChunk,
    BlockStartChunk,
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    InputError,
    LlmFailure,
    MaxTokensFinish,
    ModelAdapter,
    ReasoningBlock,
    StreamChunk,
    TextBlock,
    TextDeltaChunk,
    TokenUsage,
    ToolCallBlock,
    ToolCallsFinish,
    UsageChunk,
    create_user_message,
)
from dsh_llm.testing import FunctionAdapter, Reply, ScriptedAdapter, reply


def _request(text: str = "hi") -> GenerateRequest:
    message = create_user_message(content=text, source={"kind": "user"})
    return GenerateRequest(provider="test", model="scripted", messages=(message,))


async def _collect(adapter: ModelAdapter, request: GenerateRequest) -> list[StreamChunk]:
    return [chunk async for chunk in adapter.stream(request)]


async def test_text_response_streams_start_deltas_end_usage_finish() -> None:
    chunks = await _collect(ScriptedAdapter(["Hello there world"]), _request())

    assert chunks[0] == BlockStartChunk(index=0, block_type="text")
    assert [c.text for c in chunks if isinstance(c, TextDeltaChunk)] == [
        "Hello ",
        "there ",
        "world",
    ]
    assert chunks[-3] == BlockEndChunk(index=0, block=TextBlock(text="Hello there world"))
    assert isinstance(chunks[-2], UsageChunk)
    assert chunks[-1] == FinishChunk(reason={"kind": "stop"})


async def test_reply_with_reasoning_text_and_tool_calls_assembles_in_that_order() -> None:
    adapter = ScriptedAdapter(
        [
            reply(
                reasoning="need a tool",
                text="calling",
                tool_calls=[
                    {"name": "add", "arguments": {"a": 1, "b": 2}},
                    ToolCallBlock(call_id="given", name="echo", arguments='{"s": "x"}'),
                ],
                usage=TokenUsage(input_tokens=10, output_tokens=5),
                replay_state={"sig": "abc"},
            )
        ]
    )
    assembler = BlockAssembler()
    for chunk in await _collect(adapter, _request()):
        assembler.push(chunk)

    message = assembler.message(provider="test", model="scripted")
    assert message.content == (
        ReasoningBlock(text="need a tool"),
        TextBlock(text="calling"),
        ToolCallBlock(call_id="call-1", name="add", arguments=json.dumps({"a": 1, "b": 2})),
        ToolCallBlock(call_id="given", name="echo", arguments='{"s": "x"}'),
    )
    assert assembler.finish == ToolCallsFinish()
    assert assembler.usage == TokenUsage(input_tokens=10, output_tokens=5)
    assert message.source.replay_state == {"sig": "abc"}


async def test_generated_call_ids_stay_unique_across_responses() -> None:
    adapter = ScriptedAdapter(
        [reply(tool_calls=[{"name": "f"}, {"name": "g"}]), reply(tool_calls=[{"name": "f"}])]
    )
    ids = []
    for _ in range(2):
        chunks = await _collect(adapter, _request())
        ids += [c.block.call_id for c in chunks if isinstance(c, BlockEndChunk)]  # type: ignore[union-attr]

    assert ids == ["call-1", "call-2", "call-3"]


async def test_finish_can_be_overridden() -> None:
    chunks = await _collect(
        ScriptedAdapter([reply(text="cut", finish=MaxTokensFinish())]), _request()
    )

    assert chunks[-1] == FinishChunk(reason=MaxTokensFinish())


async def test_raw_chunk_lists_are_played_back_exactly() -> None:
    raw: list[StreamChunk] = [
        TextDeltaChunk(index=0, text="only a delta"),
        FinishChunk(reason={"kind": "stop"}),
    ]

    assert await _collect(ScriptedAdapter([raw]), _request()) == raw


async def test_scripted_adapter_records_requests_and_plays_responses_in_order() -> None:
    adapter = ScriptedAdapter(["one", "two"])
    first, second = _request("a"), _request("b")

    await _collect(adapter, first)
    assert adapter.remaining == 1
    chunks = await _collect(adapter, second)

    assert adapter.requests == [first, second]
    assert adapter.requests[0] is first
    assert TextBlock(text="two") in [c.block for c in chunks if isinstance(c, BlockEndChunk)]
    assert adapter.remaining == 0


async def test_request_beyond_the_script_ends_in_an_error_finish() -> None:
    adapter = ScriptedAdapter([])

    chunks = await _collect(adapter, _request())

    assert len(chunks) == 1
    assert isinstance(chunks[0], FinishChunk)
    assert isinstance(chunks[0].reason, ErrorFinish)
    assert "request #1" in chunks[0].reason.failure.message


async def test_scripted_failure_and_exception_become_error_finishes() -> None:
    failure = LlmFailure(message="slow down", code="RATE_LIMIT", status=429)
    adapter = ScriptedAdapter([failure, RuntimeError("provider exploded")])

    first = await _collect(adapter, _request())
    second = await _collect(adapter, _request())

    assert first == [FinishChunk(reason=ErrorFinish(failure=failure))]
    assert second == [
        FinishChunk(
            reason=ErrorFinish(
                failure=LlmFailure(message="RuntimeError: provider exploded", code="UNKNOWN")
            )
        )
    ]


async def test_exception_midway_ends_the_stream_after_the_chunks_before_it() -> None:
    delta = TextDeltaChunk(index=0, text="partial")
    chunks = await _collect(ScriptedAdapter([[delta, ConnectionError("reset")]]), _request())

    assert chunks[0] == delta
    assert isinstance(chunks[1], FinishChunk)
    assert chunks[1].reason.failure.message == "ConnectionError: reset"  # type: ignore[union-attr]


async def test_function_adapter_answers_from_the_request() -> None:
    def echo(request: GenerateRequest) -> str:
        text = request.messages[-1].content[0]
        assert isinstance(text, TextBlock)
        return text.text.upper()

    adapter = FunctionAdapter(echo)
    chunks = await _collect(adapter, _request("shout"))

    assert BlockEndChunk(index=0, block=TextBlock(text="SHOUT")) in chunks
    assert len(adapter.requests) == 1


async def test_function_adapter_accepts_async_functions() -> None:
    async def think(request: GenerateRequest) -> Reply:
        await asyncio.sleep(0)
        return reply(reasoning="hmm")

    chunks = await _collect(FunctionAdapter(think), _request())

    assert BlockEndChunk(index=0, block=ReasoningBlock(text="hmm")) in chunks


async def test_function_that_raises_becomes_an_error_finish() -> None:
    def broken(request: GenerateRequest) -> str:
        raise ValueError("bad model")

    chunks = await _collect(FunctionAdapter(broken), _request())

    assert chunks == [
        FinishChunk(
            reason=ErrorFinish(failure=LlmFailure(message="ValueError: bad model", code="UNKNOWN"))
        )
    ]


async def test_delay_lets_a_consumer_cancel_mid_stream() -> None:
    adapter = ScriptedAdapter(["one two three four five six"], delay=0.05)
    received: list[StreamChunk] = []

    async def consume() -> None:
        async for chunk in adapter.stream(_request()):
            received.append(chunk)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.12)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert 1 <= len(received) < 5
    assert not any(isinstance(chunk, FinishChunk) for chunk in received)


def test_a_misspelled_tool_call_key_is_refused_naming_it() -> None:
    with pytest.raises(InputError, match="unknown key 'nme'") as raised:
        reply(tool_calls=[{"name": "f"}, {"nme": "g"}])
    assert raised.value.field == "tool_calls[1].nme"
    with pytest.raises(InputError, match="needs a non-empty 'name'"):
        reply(tool_calls=[{"arguments": {}}])
