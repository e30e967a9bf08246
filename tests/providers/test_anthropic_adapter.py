"""AnthropicAdapter through the official ``anthropic`` client against a local server
speaking the Messages streaming protocol."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from dsh_llm import (
    BlockAssembler,
    BlockEndChunk,
    BlockStartChunk,
    ErrorFinish,
    FinishChunk,
    FinishReason,
    GenerateRequest,
    ImageBlock,
    LlmFailure,
    MaxTokensFinish,
    Message,
    ReasoningBlock,
    ReasoningDeltaChunk,
    StopFinish,
    StreamChunk,
    TextBlock,
    TextDeltaChunk,
    TokenUsage,
    ToolCallBlock,
    ToolCallDeltaChunk,
    ToolCallsFinish,
    ToolSchema,
    UsageChunk,
    create_assistant_message,
    create_system_message,
    create_tool_result_message,
    create_user_message,
)
from dsh_llm.providers import AnthropicAdapter
from providers.frames import (
    anthropic_event,
    block_delta,
    block_start,
    block_stop,
    message_end,
    message_start,
    text_reply,
)
from providers.http_stub import StubServer, json_reply, sse_reply

THINKING = {"type": "enabled", "budget_tokens": 2048}
REPLAY = {
    "format": "anthropic-messages",
    "thinking": [
        {"type": "thinking", "signature": "sig-EqQBCkYIBRgC"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
    ],
}


THINKING_TOOL_USE = [
    message_start(cache_read_input_tokens=100, cache_creation_input_tokens=20),
    anthropic_event("ping"),
    block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
    block_delta(0, {"type": "thinking_delta", "thinking": "Two cities, "}),
    block_delta(0, {"type": "thinking_delta", "thinking": "two calls."}),
    block_delta(0, {"type": "signature_delta", "signature": "sig-EqQBCkYIBRgC"}),
    block_stop(0),
    block_start(1, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}),
    block_stop(1),
    block_start(2, {"type": "text", "text": ""}),
    block_delta(2, {"type": "text_delta", "text": "Checking both."}),
    block_stop(2),
    block_start(3, {"type": "tool_use", "id": "toolu_a", "name": "weather", "input": {}}),
    block_delta(3, {"type": "input_json_delta", "partial_json": '{"city": '}),
    block_delta(3, {"type": "input_json_delta", "partial_json": '"Paris"}'}),
    block_stop(3),
    block_start(4, {"type": "tool_use", "id": "toolu_b", "name": "weather", "input": {}}),
    block_delta(4, {"type": "input_json_delta", "partial_json": '{"city": "Rome"}'}),
    block_stop(4),
    *message_end("tool_use", output_tokens=60),
]
"""A thinking (signed), redacted-thinking, text and two-tool-use response."""


def user(text: str) -> Message:
    return create_user_message(content=text, source={"kind": "user"})


def request(*messages: Message, **options: Any) -> GenerateRequest:
    defaults: dict[str, Any] = {"provider": "anthropic", "model": "claude-test"}
    return GenerateRequest(messages=messages or (user("hi"),), **{**defaults, **options})


def adapter_for(stub: StubServer, **options: Any) -> AnthropicAdapter:
    return AnthropicAdapter(base_url=stub.url, api_key="test-key", max_retries=0, **options)


async def collect(chunks: AsyncIterator[StreamChunk]) -> list[StreamChunk]:
    return [item async for item in chunks]


def failure_of(chunks: list[StreamChunk]) -> LlmFailure:
    last = chunks[-1]
    assert isinstance(last, FinishChunk)
    assert isinstance(last.reason, ErrorFinish)
    return last.reason.failure


async def test_thinking_text_and_parallel_tool_use(stub: StubServer) -> None:
    stub.script(sse_reply(THINKING_TOOL_USE))

    chunks = await collect(adapter_for(stub, thinking=THINKING).stream(request()))

    assert chunks[:6] == [
        BlockStartChunk(index=0, block_type="reasoning"),
        ReasoningDeltaChunk(index=0, text="Two cities, "),
        ReasoningDeltaChunk(index=0, text="two calls."),
        BlockEndChunk(index=0, block=ReasoningBlock(text="Two cities, two calls.")),
        # redacted thinking has no readable text: an empty reasoning block stands for it
        BlockStartChunk(index=1, block_type="reasoning"),
        BlockEndChunk(index=1, block=ReasoningBlock(text="")),
    ]
    assert (
        ToolCallDeltaChunk(index=3, call_id="toolu_a", name="weather", arguments_delta="") in chunks
    )
    ends = [item.block for item in chunks if isinstance(item, BlockEndChunk)]
    assert ends == [
        ReasoningBlock(text="Two cities, two calls."),
        ReasoningBlock(text=""),
        TextBlock(text="Checking both."),
        ToolCallBlock(call_id="toolu_a", name="weather", arguments='{"city": "Paris"}'),
        ToolCallBlock(call_id="toolu_b", name="weather", arguments='{"city": "Rome"}'),
    ]
    assert chunks[-2:] == [
        UsageChunk(
            usage=TokenUsage(
                input_tokens=10, output_tokens=60, cache_read_tokens=100, cache_write_tokens=20
            )
        ),
        FinishChunk(reason=ToolCallsFinish(), replay_state=REPLAY),
    ]


async def test_text_deltas_stream_in_order(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                message_start(),
                block_start(0, {"type": "text", "text": ""}),
                block_delta(0, {"type": "text_delta", "text": "Hel"}),
                block_delta(0, {"type": "text_delta", "text": "lo"}),
                block_stop(0),
                *message_end("end_turn", output_tokens=2),
            ]
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks == [
        BlockStartChunk(index=0, block_type="text"),
        TextDeltaChunk(index=0, text="Hel"),
        TextDeltaChunk(index=0, text="lo"),
        BlockEndChunk(index=0, block=TextBlock(text="Hello")),
        UsageChunk(usage=TokenUsage(input_tokens=10, output_tokens=2)),
        FinishChunk(reason=StopFinish()),
    ]


async def test_request_carries_system_tools_and_options(stub: StubServer) -> None:
    stub.script(sse_reply(text_reply("ok")))
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    history = (
        create_system_message(content="Answer in French."),
        user("Weather in Paris?"),
    )

    await collect(
        adapter_for(stub, thinking=THINKING).stream(
            request(
                *history,
                system="Be brief.",
                tools=(ToolSchema(name="weather", description="Weather", parameters=schema),),
                temperature=1.0,
                top_p=0.95,
                stop=("END",),
            )
        )
    )

    [received] = stub.requests
    assert received.path == "/v1/messages"
    assert received.body == {
        "model": "claude-test",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}],
        "stream": True,
        "system": "Be brief.\n\nAnswer in French.",
        "tools": [{"name": "weather", "description": "Weather", "input_schema": schema}],
        "temperature": 1.0,
        "top_p": 0.95,
        "stop_sequences": ["END"],
        "thinking": THINKING,
    }


async def test_thinking_is_replayed_verbatim_to_the_same_model(stub: StubServer) -> None:
    stub.script(sse_reply(THINKING_TOOL_USE), sse_reply(text_reply("Paris 18°C.")))
    adapter = adapter_for(stub, thinking=THINKING)
    question = user("Weather in Paris and Rome?")
    assembler = BlockAssembler()
    async for item in adapter.stream(request(question)):
        assembler.push(item)
    answer = assembler.message(provider="anthropic", model="claude-test")
    history = (
        question,
        answer,
        create_tool_result_message(call_id="toolu_a", content="18°C"),
        create_tool_result_message(call_id="toolu_b", content="city not found", is_error=True),
        user("Also in Celsius please."),
    )

    await collect(adapter.stream(request(*history)))

    assert stub.bodies[1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "thinking",
                    "thinking": "Two cities, two calls.",
                    "signature": "sig-EqQBCkYIBRgC",
                },
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
                {"type": "text", "text": "Checking both."},
                {
                    "type": "tool_use",
                    "id": "toolu_a",
                    "name": "weather",
                    "input": {"city": "Paris"},
                },
                {"type": "tool_use", "id": "toolu_b", "name": "weather", "input": {"city": "Rome"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "is_error": False,
                    "content": [{"type": "text", "text": "18°C"}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "is_error": True,
                    "content": [{"type": "text", "text": "city not found"}],
                },
                {"type": "text", "text": "Also in Celsius please."},
            ],
        },
    ]


@pytest.mark.parametrize(
    ("provider", "model"), [("anthropic", "claude-older"), ("deepseek", "claude-test")]
)
async def test_thinking_of_another_model_is_not_replayed(
    stub: StubServer, provider: str, model: str
) -> None:
    stub.script(sse_reply(text_reply("Paris 18°C.")))
    answer = create_assistant_message(
        content=[
            ReasoningBlock(text="Two cities, two calls."),
            ReasoningBlock(text=""),
            ToolCallBlock(call_id="toolu_a", name="weather", arguments='{"city": "Paris"}'),
        ],
        source={"provider": provider, "model": model, "replayState": REPLAY},
    )
    result = create_tool_result_message(call_id="toolu_a", content="18°C")

    await collect(adapter_for(stub).stream(request(user("Weather?"), answer, result)))

    assert stub.bodies[0]["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "weather", "input": {"city": "Paris"}}
        ],
    }


@pytest.mark.parametrize(
    "arguments",
    ['{"city": "Par', "[" * 100_000 + "]" * 100_000],
    ids=["broken", "nested-past-the-parser"],
)
async def test_tool_arguments_that_are_not_a_json_object_are_sent_as_empty_input(
    stub: StubServer, arguments: str
) -> None:
    stub.script(sse_reply(text_reply("ok")))
    answer = create_assistant_message(
        content=[ToolCallBlock(call_id="call_1", name="weather", arguments=arguments)],
        source={"provider": "deepseek", "model": "deepseek-chat"},
    )
    result = create_tool_result_message(
        call_id="call_1", content="invalid arguments", is_error=True
    )

    await collect(adapter_for(stub).stream(request(user("Weather?"), answer, result)))

    assert stub.bodies[0]["messages"][1]["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "weather", "input": {}}
    ]


async def test_images_travel_as_image_blocks(stub: StubServer) -> None:
    stub.script(sse_reply(text_reply("A cat.")))
    message = create_user_message(
        content=[
            ImageBlock(media_type="image/png", data="iVBORw0KGgo="),
            ImageBlock(media_type="image/jpeg", url="https://example.com/cat.jpg"),
        ],
        source={"kind": "user"},
    )

    await collect(adapter_for(stub).stream(request(message)))

    assert stub.bodies[0]["messages"][0]["content"] == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        },
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
    ]


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", StopFinish()),
        ("stop_sequence", StopFinish()),
        ("max_tokens", MaxTokensFinish()),
        (
            "refusal",
            ErrorFinish(failure=LlmFailure(message="the model refused to answer", code="REFUSAL")),
        ),
    ],
)
async def test_stop_reasons(stub: StubServer, stop_reason: str, finish: FinishReason) -> None:
    stub.script(sse_reply(text_reply("Once", stop_reason=stop_reason)))

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks[-1] == FinishChunk(reason=finish)


async def test_overloaded_529_is_an_error_finish(stub: StubServer) -> None:
    stub.script(
        json_reply(
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            headers={"request-id": "req_011"},
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks == [
        FinishChunk(
            reason=ErrorFinish(
                failure=LlmFailure(
                    message="HTTP 529: Overloaded",
                    code="SERVER",
                    status=529,
                    request_id="req_011",
                )
            )
        )
    ]
    assert len(stub.requests) == 1


async def test_rate_limit_keeps_retry_after(stub: StubServer) -> None:
    stub.script(
        json_reply(
            429,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
            headers={"retry-after": "7"},
        )
    )

    failure = failure_of(await collect(adapter_for(stub).stream(request())))

    assert (failure.code, failure.status, failure.provider_retry_after_ms) == (
        "RATE_LIMIT",
        429,
        7000,
    )


async def test_internal_server_error_is_a_provider_error(stub: StubServer) -> None:
    stub.script(
        json_reply(500, {"type": "error", "error": {"type": "api_error", "message": "Oops"}})
    )

    failure = failure_of(await collect(adapter_for(stub).stream(request())))

    assert (failure.code, failure.status, failure.message) == (
        "SERVER",
        500,
        "HTTP 500: Oops",
    )


async def test_error_event_inside_the_stream(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                message_start(),
                block_start(0, {"type": "text", "text": ""}),
                block_delta(0, {"type": "text_delta", "text": "Hel"}),
                anthropic_event(
                    "error", error={"type": "overloaded_error", "message": "Overloaded"}
                ),
            ]
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks[1] == TextDeltaChunk(index=0, text="Hel")
    assert failure_of(chunks) == LlmFailure(
        message="error event in the stream: Overloaded", code="SERVER"
    )


async def test_stream_cut_mid_way_ends_in_stream_interrupted(stub: StubServer) -> None:
    stub.script(sse_reply(text_reply("Hello")[:3], then="cut"))

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks[:2] == [
        BlockStartChunk(index=0, block_type="text"),
        TextDeltaChunk(index=0, text="Hello"),
    ]
    assert failure_of(chunks).code == "TRANSPORT"
    assert not any(isinstance(item, BlockEndChunk) for item in chunks)


async def test_stream_ending_without_message_stop_is_interrupted(stub: StubServer) -> None:
    stub.script(sse_reply(text_reply("Hello")[:-1]))

    failure = failure_of(await collect(adapter_for(stub).stream(request())))

    assert failure.code == "STREAM_CLOSED"
