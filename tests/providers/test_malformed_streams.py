"""A provider adapter never raises out of ``stream()``: a stream value it cannot turn
into a dsh value ends the call in ``finish {error}`` with code ``MALFORMED_RESPONSE``
and a message naming the wire field, and nothing follows its finish."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsh_llm import (
    BlockEndChunk,
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    LlmFailure,
    MaxTokensFinish,
    ModelAdapter,
    StopFinish,
    StreamChunk,
    TextBlock,
    TextDeltaChunk,
    UsageChunk,
    create_user_message,
)
from dsh_llm.providers import AnthropicAdapter, OpenAIChatAdapter
from providers.frames import (
    CHAT_DONE,
    anthropic_event,
    block_delta,
    block_start,
    block_stop,
    chat_chunk,
    chat_usage,
    message_end,
    message_start,
    text_reply,
)
from providers.http_stub import StubServer, sse_frame, sse_reply


def openai_adapter(stub: StubServer, **options: Any) -> ModelAdapter:
    return OpenAIChatAdapter(base_url=f"{stub.url}/v1", api_key="k", max_retries=0, **options)


def anthropic_adapter(stub: StubServer, **options: Any) -> ModelAdapter:
    return AnthropicAdapter(base_url=stub.url, api_key="k", max_retries=0, **options)


async def stream(adapter: ModelAdapter) -> list[StreamChunk]:
    question = create_user_message(content="hi", source={"kind": "user"})
    request = GenerateRequest(provider="p", model="m", messages=(question,))
    return [chunk async for chunk in adapter.stream(request)]


def failure_of(chunks: list[StreamChunk]) -> LlmFailure:
    finishes = [chunk for chunk in chunks if isinstance(chunk, FinishChunk)]
    assert finishes == [chunks[-1]]
    last = chunks[-1]
    assert isinstance(last, FinishChunk)
    assert isinstance(last.reason, ErrorFinish)
    return last.reason.failure


def openai_text_then_usage(usage: dict[str, Any]) -> list[bytes]:
    return [
        chat_chunk({"content": "Hi"}, finish_reason="stop"),
        chat_chunk(usage=usage),
        CHAT_DONE,
    ]


def anthropic_text_then_usage(**usage: Any) -> list[bytes]:
    return [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": "Hi"}),
        block_stop(0),
        anthropic_event(
            "message_delta", delta={"stop_reason": "end_turn", "stop_sequence": None}, usage=usage
        ),
        anthropic_event("message_stop"),
    ]


@pytest.mark.parametrize(
    ("usage", "field"),
    [
        (chat_usage(3, -2), "usage.completion_tokens"),
        ({**chat_usage(3, 2), "prompt_tokens": None}, "usage.prompt_tokens"),
        (
            chat_usage(3, 2, prompt_tokens_details={"cached_tokens": -1}),
            "usage.prompt_tokens_details.cached_tokens",
        ),
    ],
)
async def test_openai_usage_that_is_not_a_count_is_a_malformed_response(
    stub: StubServer, usage: dict[str, Any], field: str
) -> None:
    stub.script(sse_reply(openai_text_then_usage(usage)))

    reported = failure_of(await stream(openai_adapter(stub)))

    assert reported.code == "MALFORMED_RESPONSE"
    assert field in reported.message


@pytest.mark.parametrize(
    ("usage", "field"),
    [
        ({"output_tokens": -5}, "usage.output_tokens"),
        ({"output_tokens": 5, "input_tokens": "many"}, "usage.input_tokens"),
        ({"output_tokens": 5, "cache_read_input_tokens": -1}, "usage.cache_read_input_tokens"),
    ],
)
async def test_anthropic_usage_that_is_not_a_count_is_a_malformed_response(
    stub: StubServer, usage: dict[str, Any], field: str
) -> None:
    stub.script(sse_reply(anthropic_text_then_usage(**usage)))

    reported = failure_of(await stream(anthropic_adapter(stub)))

    assert reported.code == "MALFORMED_RESPONSE"
    assert field in reported.message


@pytest.mark.parametrize("call_id", ["call\x00", "x" * 300])
async def test_openai_call_id_dsh_cannot_hold_is_a_malformed_response(
    stub: StubServer, call_id: str
) -> None:
    call = {"index": 0, "id": call_id, "function": {"name": "f", "arguments": "{}"}}
    stub.script(sse_reply([chat_chunk({"tool_calls": [call]}), CHAT_DONE]))

    reported = failure_of(await stream(openai_adapter(stub)))

    assert reported.code == "MALFORMED_RESPONSE"
    assert "tool_calls[0].id" in reported.message


async def test_anthropic_tool_use_id_dsh_cannot_hold_is_a_malformed_response(
    stub: StubServer,
) -> None:
    tool_use = {"type": "tool_use", "id": "toolu\x07", "name": "f", "input": {}}
    stub.script(sse_reply([message_start(), block_start(0, tool_use), block_stop(0)]))

    reported = failure_of(await stream(anthropic_adapter(stub)))

    assert reported.code == "MALFORMED_RESPONSE"
    assert "content_block.id" in reported.message


@pytest.mark.parametrize(
    ("delta", "field"),
    [
        ({"content": 42}, "choices[0].delta.content"),
        ({"tool_calls": "not a list"}, "choices[0].delta.tool_calls"),
        ({"tool_calls": [{"index": "first"}]}, "choices[0].delta.tool_calls[0].index"),
        (
            {"tool_calls": [{"index": 0, "function": {"arguments": {"a": 1}}}]},
            "choices[0].delta.tool_calls[0].function.arguments",
        ),
    ],
    ids=["content", "tool_calls", "tool call index", "arguments"],
)
async def test_openai_delta_of_the_wrong_shape_is_a_malformed_response(
    stub: StubServer, delta: dict[str, Any], field: str
) -> None:
    stub.script(sse_reply([chat_chunk(delta), CHAT_DONE]))

    reported = failure_of(await stream(openai_adapter(stub)))

    assert reported.code == "MALFORMED_RESPONSE"
    assert field in reported.message


async def test_anthropic_delta_of_the_wrong_shape_is_a_malformed_response(
    stub: StubServer,
) -> None:
    stub.script(
        sse_reply(
            [
                message_start(),
                block_start(0, {"type": "text", "text": ""}),
                block_delta(0, {"type": "text_delta", "text": ["not", "text"]}),
                block_stop(0),
                *message_end("end_turn"),
            ]
        )
    )

    reported = failure_of(await stream(anthropic_adapter(stub)))

    assert reported.code == "MALFORMED_RESPONSE"
    assert "delta.text" in reported.message


async def test_openai_output_after_the_first_finish_reason_is_ignored(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                chat_chunk({"content": "Hi"}, finish_reason="stop"),
                chat_chunk({"content": " and more"}),
                chat_chunk({"content": "!"}, finish_reason="length"),
                chat_chunk(usage=chat_usage(3, 1)),
                CHAT_DONE,
            ]
        )
    )

    chunks = await stream(openai_adapter(stub))

    texts = [chunk.text for chunk in chunks if isinstance(chunk, TextDeltaChunk)]
    assert texts == ["Hi"]
    assert BlockEndChunk(index=0, block=TextBlock(text="Hi")) in chunks
    assert any(isinstance(chunk, UsageChunk) for chunk in chunks)
    assert chunks[-1] == FinishChunk(reason=StopFinish())


async def test_anthropic_output_after_the_first_stop_reason_is_ignored(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                message_start(),
                block_start(0, {"type": "text", "text": ""}),
                block_delta(0, {"type": "text_delta", "text": "Hi"}),
                block_stop(0),
                anthropic_event(
                    "message_delta",
                    delta={"stop_reason": "end_turn", "stop_sequence": None},
                    usage={"output_tokens": 1},
                ),
                block_start(1, {"type": "text", "text": "late"}),
                block_delta(1, {"type": "text_delta", "text": " text"}),
                block_stop(1),
                *message_end("max_tokens", output_tokens=3),
            ]
        )
    )

    chunks = await stream(anthropic_adapter(stub))

    texts = [chunk.text for chunk in chunks if isinstance(chunk, TextDeltaChunk)]
    assert texts == ["Hi"]
    assert [chunk.index for chunk in chunks if isinstance(chunk, BlockEndChunk)] == [0]
    assert chunks[-1] == FinishChunk(reason=StopFinish())
    assert not isinstance(chunks[-1].reason, MaxTokensFinish)


async def test_anthropic_stops_reading_at_message_stop(stub: StubServer) -> None:
    late = [block_start(1, {"type": "text", "text": "late"}), block_stop(1)]
    stub.script(sse_reply([*text_reply("Hi"), *late], then="hold"))

    chunks = await stream(anthropic_adapter(stub, timeout=5.0))

    assert chunks[-1] == FinishChunk(reason=StopFinish())
    assert [chunk.index for chunk in chunks if isinstance(chunk, BlockEndChunk)] == [0]
    await asyncio.wait_for(stub.client_hung_up.wait(), timeout=10)


async def test_an_event_the_adapter_cannot_read_is_malformed_and_its_traceback_logged(
    stub: StubServer, caplog: pytest.LogCaptureFixture
) -> None:
    event = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    choice = {"index": 0, "delta": "not an object", "finish_reason": None}
    stub.script(sse_reply([sse_frame({**event, "choices": [choice]}), CHAT_DONE]))

    reported = failure_of(await stream(openai_adapter(stub)))

    assert reported.code == "MALFORMED_RESPONSE"
    assert "AttributeError" in reported.message
    [record] = [r for r in caplog.records if r.name == "dsh_llm.providers"]
    assert record.exc_info is not None


async def test_anthropic_delta_of_another_block_type_is_a_malformed_response(
    stub: StubServer,
) -> None:
    stub.script(
        sse_reply(
            [
                message_start(),
                block_start(0, {"type": "text", "text": ""}),
                block_delta(0, {"type": "input_json_delta", "partial_json": '{"a": 1}'}),
                block_stop(0),
                *message_end("end_turn"),
            ]
        )
    )

    reported = failure_of(await stream(anthropic_adapter(stub)))

    assert reported.code == "MALFORMED_RESPONSE"
    assert "delta.type" in reported.message
