"""OpenAIChatAdapter through the official ``openai`` client against a local server
speaking the chat-completions streaming protocol (OpenAI and DeepSeek shapes)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dsh_llm import (
    BlockAssembler,
    BlockEndChunk,
    BlockStartChunk,
    ErrorFinish,
    FinishChunk,
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
    create_tool_result_message,
    create_user_message,
)
from dsh_llm.providers import OpenAIChatAdapter
from providers.frames import CHAT_DONE, chat_chunk, chat_usage
from providers.http_stub import StubServer, json_reply, sse_frame, sse_reply


def user(text: str) -> Message:
    return create_user_message(content=text, source={"kind": "user"})


def request(*messages: Message, **options: Any) -> GenerateRequest:
    defaults: dict[str, Any] = {"provider": "deepseek", "model": "deepseek-chat"}
    return GenerateRequest(messages=messages or (user("hi"),), **{**defaults, **options})


def adapter_for(stub: StubServer) -> OpenAIChatAdapter:
    return OpenAIChatAdapter(
        base_url=f"{stub.url}/v1", api_key="test-key", provider="deepseek", max_retries=0
    )


async def collect(chunks: AsyncIterator[StreamChunk]) -> list[StreamChunk]:
    return [item async for item in chunks]


def failure_of(chunks: list[StreamChunk]) -> LlmFailure:
    last = chunks[-1]
    assert isinstance(last, FinishChunk)
    assert isinstance(last.reason, ErrorFinish)
    return last.reason.failure


async def test_text_streams_as_one_block_then_usage_then_stop(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                chat_chunk({"role": "assistant", "content": ""}),
                chat_chunk({"content": "Hel"}),
                chat_chunk({"content": "lo"}),
                chat_chunk({}, finish_reason="stop"),
                chat_chunk(usage=chat_usage(12, 2)),
                CHAT_DONE,
            ]
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks == [
        BlockStartChunk(index=0, block_type="text"),
        TextDeltaChunk(index=0, text="Hel"),
        TextDeltaChunk(index=0, text="lo"),
        BlockEndChunk(index=0, block=TextBlock(text="Hello")),
        UsageChunk(usage=TokenUsage(input_tokens=12, output_tokens=2)),
        FinishChunk(reason=StopFinish()),
    ]


async def test_request_carries_system_prompt_options_and_tools(stub: StubServer) -> None:
    stub.script(sse_reply([chat_chunk({"content": "ok"}, finish_reason="stop"), CHAT_DONE]))
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tool = ToolSchema(name="weather", description="Current weather", parameters=schema)

    await collect(
        adapter_for(stub).stream(
            request(
                user("Weather in Paris?"),
                system="Be brief.",
                tools=(tool,),
                max_tokens=256,
                temperature=0.2,
                top_p=0.9,
                stop=("END",),
                reasoning_effort="high",
            )
        )
    )

    [received] = stub.requests
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == "Bearer test-key"
    assert received.body == {
        "model": "deepseek-chat",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": "Current weather",
                    "parameters": schema,
                },
            }
        ],
        "max_tokens": 256,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": ["END"],
        "reasoning_effort": "high",
    }


async def test_max_completion_tokens_field_for_openai_reasoning_models(stub: StubServer) -> None:
    stub.script(sse_reply([chat_chunk({"content": "ok"}, finish_reason="stop"), CHAT_DONE]))
    adapter = OpenAIChatAdapter(
        base_url=f"{stub.url}/v1",
        api_key="k",
        max_retries=0,
        max_tokens_field="max_completion_tokens",
    )

    await collect(adapter.stream(request(provider="openai", model="o4-mini", max_tokens=99)))

    assert stub.bodies[0]["max_completion_tokens"] == 99
    assert "max_tokens" not in stub.bodies[0]


async def test_deepseek_reasoning_and_parallel_tool_calls(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                chat_chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
                chat_chunk({"reasoning_content": "Two cities, "}),
                chat_chunk({"reasoning_content": "two calls."}),
                chat_chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "weather", "arguments": ""},
                            },
                            {
                                "index": 1,
                                "id": "call_b",
                                "type": "function",
                                "function": {"name": "weather", "arguments": '{"ci'},
                            },
                        ]
                    }
                ),
                chat_chunk(
                    {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]}
                ),
                chat_chunk(
                    {"tool_calls": [{"index": 1, "function": {"arguments": 'ty": "Rome"}'}}]}
                ),
                chat_chunk({}, finish_reason="tool_calls"),
                chat_chunk(
                    usage=chat_usage(
                        100,
                        40,
                        prompt_cache_hit_tokens=80,
                        prompt_cache_miss_tokens=20,
                        completion_tokens_details={"reasoning_tokens": 7},
                    )
                ),
                CHAT_DONE,
            ]
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks[:3] == [
        BlockStartChunk(index=0, block_type="reasoning"),
        ReasoningDeltaChunk(index=0, text="Two cities, "),
        ReasoningDeltaChunk(index=0, text="two calls."),
    ]
    assert (
        ToolCallDeltaChunk(
            index=2, call_id="call_b", name="weather", arguments_delta='ty": "Rome"}'
        )
        in chunks
    )
    ends = [item.block for item in chunks if isinstance(item, BlockEndChunk)]
    assert ends == [
        ReasoningBlock(text="Two cities, two calls."),
        ToolCallBlock(call_id="call_a", name="weather", arguments='{"city": "Paris"}'),
        ToolCallBlock(call_id="call_b", name="weather", arguments='{"city": "Rome"}'),
    ]
    assert chunks[-2:] == [
        UsageChunk(
            usage=TokenUsage(
                input_tokens=20, output_tokens=40, cache_read_tokens=80, reasoning_tokens=7
            )
        ),
        FinishChunk(
            reason=ToolCallsFinish(),
            replay_state={"format": "openai-chat", "reasoningField": "reasoning_content"},
        ),
    ]


async def test_reasoning_without_tool_calls_needs_no_replay_state(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                chat_chunk({"reasoning_content": "Easy."}),
                chat_chunk({"content": "4"}, finish_reason="stop"),
                CHAT_DONE,
            ]
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks[-1] == FinishChunk(reason=StopFinish())


def tool_call_history(*, provider: str, model: str) -> tuple[Message, ...]:
    """A user question, a DeepSeek thinking-mode tool call, and its result."""
    call = ToolCallBlock(call_id="call_a", name="weather", arguments='{"city": "Paris"}')
    assistant = create_assistant_message(
        content=[ReasoningBlock(text="Need the weather."), call],
        source={
            "provider": provider,
            "model": model,
            "replayState": {"format": "openai-chat", "reasoningField": "reasoning_content"},
        },
    )
    result = create_tool_result_message(call_id="call_a", content="18°C, clear")
    return (user("Weather in Paris?"), assistant, result)


async def test_reasoning_is_sent_back_to_the_model_that_produced_it(stub: StubServer) -> None:
    stub.script(sse_reply([chat_chunk({"content": "18°C"}, finish_reason="stop"), CHAT_DONE]))
    history = tool_call_history(provider="deepseek", model="deepseek-chat")

    await collect(adapter_for(stub).stream(request(*history)))

    assert stub.bodies[0]["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                }
            ],
            "reasoning_content": "Need the weather.",
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "18°C, clear"},
    ]


@pytest.mark.parametrize(
    ("provider", "model"), [("deepseek", "deepseek-reasoner"), ("other", "deepseek-chat")]
)
async def test_reasoning_is_not_sent_to_another_provider_or_model(
    stub: StubServer, provider: str, model: str
) -> None:
    stub.script(sse_reply([chat_chunk({"content": "18°C"}, finish_reason="stop"), CHAT_DONE]))
    history = tool_call_history(provider=provider, model=model)

    await collect(adapter_for(stub).stream(request(*history)))

    assistant = stub.bodies[0]["messages"][1]
    assert assistant["role"] == "assistant"
    assert "reasoning_content" not in assistant
    assert assistant["tool_calls"][0]["id"] == "call_a"


async def test_openai_cached_tokens_are_reported_disjointly(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                chat_chunk({"content": "ok"}, finish_reason="stop"),
                chat_chunk(usage=chat_usage(50, 5, prompt_tokens_details={"cached_tokens": 30})),
                CHAT_DONE,
            ]
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert (
        UsageChunk(usage=TokenUsage(input_tokens=20, output_tokens=5, cache_read_tokens=30))
        in chunks
    )


async def test_images_travel_as_image_url_parts(stub: StubServer) -> None:
    stub.script(sse_reply([chat_chunk({"content": "A cat."}, finish_reason="stop"), CHAT_DONE]))
    message = create_user_message(
        content=[
            TextBlock(text="What is this?"),
            ImageBlock(media_type="image/png", data="iVBORw0KGgo="),
            ImageBlock(media_type="image/jpeg", url="https://example.com/cat.jpg"),
        ],
        source={"kind": "user"},
    )

    await collect(adapter_for(stub).stream(request(message)))

    assert stub.bodies[0]["messages"][0]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
    ]


async def test_tool_calls_reported_with_stop_still_finish_as_tool_calls(
    stub: StubServer,
) -> None:
    call = {"index": 0, "id": "call_1", "function": {"name": "weather", "arguments": "{}"}}
    stub.script(
        sse_reply(
            [chat_chunk({"tool_calls": [call]}), chat_chunk({}, finish_reason="stop"), CHAT_DONE]
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks[-1] == FinishChunk(reason=ToolCallsFinish())


async def test_content_filter_is_an_error_finish(stub: StubServer) -> None:
    stub.script(
        sse_reply([chat_chunk({"content": "I"}, finish_reason="content_filter"), CHAT_DONE])
    )

    failure = failure_of(await collect(adapter_for(stub).stream(request())))

    assert failure.code == "CONTENT_FILTER"


async def test_reasoning_survives_assembly_and_goes_back_in_the_field_it_came_in(
    stub: StubServer,
) -> None:
    call = {"index": 0, "id": "call_1", "function": {"name": "weather", "arguments": "{}"}}
    stub.script(
        sse_reply(
            [
                chat_chunk({"reasoning": "Use the tool."}),
                chat_chunk({"tool_calls": [call]}, finish_reason="tool_calls"),
                CHAT_DONE,
            ]
        ),
        sse_reply([chat_chunk({"content": "Sunny."}, finish_reason="stop"), CHAT_DONE]),
    )
    adapter = adapter_for(stub)
    question = user("Weather?")
    assembler = BlockAssembler()
    async for item in adapter.stream(request(question)):
        assembler.push(item)
    answer = assembler.message(provider="deepseek", model="deepseek-chat")
    result = create_tool_result_message(call_id="call_1", content="sunny")

    await collect(adapter.stream(request(question, answer, result)))

    replayed = stub.bodies[1]["messages"][1]
    assert replayed["reasoning"] == "Use the tool."
    assert "reasoning_content" not in replayed


async def test_length_finish_is_max_tokens(stub: StubServer) -> None:
    stub.script(
        sse_reply([chat_chunk({"content": "Once upon"}, finish_reason="length"), CHAT_DONE])
    )

    chunks = await collect(adapter_for(stub).stream(request(max_tokens=2)))

    assert chunks[-1] == FinishChunk(reason=MaxTokensFinish())


async def test_rate_limit_becomes_an_error_finish_with_retry_facts(stub: StubServer) -> None:
    stub.script(
        json_reply(
            429,
            {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}},
            headers={"retry-after": "2", "x-request-id": "req-429"},
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert len(chunks) == 1
    assert failure_of(chunks) == LlmFailure(
        message="HTTP 429: Rate limit reached",
        code="RATE_LIMIT",
        status=429,
        provider_retry_after_ms=2000,
        request_id="req-429",
    )
    assert len(stub.requests) == 1


async def test_server_error_becomes_provider_error(stub: StubServer) -> None:
    stub.script(
        json_reply(
            500,
            {"error": {"message": "upstream exploded", "type": "server_error"}},
            headers={"retry-after-ms": "1500"},
        )
    )

    failure = failure_of(await collect(adapter_for(stub).stream(request())))

    assert (failure.code, failure.status, failure.provider_retry_after_ms) == (
        "SERVER",
        500,
        1500,
    )
    assert "upstream exploded" in failure.message


async def test_unreachable_server_is_a_connection_error(stub: StubServer) -> None:
    await stub.close()

    failure = failure_of(await collect(adapter_for(stub).stream(request())))

    assert failure.code == "TRANSPORT"
    assert failure.status is None


async def test_stream_cut_mid_way_ends_in_stream_interrupted(stub: StubServer) -> None:
    stub.script(
        sse_reply([chat_chunk({"content": "Hel"}), chat_chunk({"content": "lo"})], then="cut")
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks[:3] == [
        BlockStartChunk(index=0, block_type="text"),
        TextDeltaChunk(index=0, text="Hel"),
        TextDeltaChunk(index=0, text="lo"),
    ]
    assert len(chunks) == 4
    assert failure_of(chunks).code == "TRANSPORT"


async def test_stream_ending_without_finish_reason_is_interrupted(stub: StubServer) -> None:
    stub.script(sse_reply([chat_chunk({"content": "Hel"})]))

    chunks = await collect(adapter_for(stub).stream(request()))

    assert failure_of(chunks).code == "STREAM_CLOSED"
    assert not any(isinstance(item, BlockEndChunk) for item in chunks)


async def test_error_payload_inside_the_stream_is_a_provider_error(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                chat_chunk({"content": "Hel"}),
                sse_frame({"error": {"message": "model crashed", "type": "server_error"}}),
            ]
        )
    )

    failure = failure_of(await collect(adapter_for(stub).stream(request())))

    assert failure.code == "SERVER"
    assert "model crashed" in failure.message


async def test_content_the_protocol_cannot_carry_fails_before_any_request(
    stub: StubServer,
) -> None:
    odd = create_user_message(content=[ReasoningBlock(text="hmm")], source={"kind": "user"})

    failure = failure_of(await collect(adapter_for(stub).stream(request(odd))))

    assert failure.code == "INVALID_REQUEST"
    assert odd.id in failure.message and "'reasoning'" in failure.message
    assert stub.requests == []


async def test_cancelling_the_consumer_closes_the_connection(stub: StubServer) -> None:
    stub.script(sse_reply([chat_chunk({"content": "Hel"})], then="hold"))
    first_delta = asyncio.Event()

    async def consume() -> None:
        async for item in adapter_for(stub).stream(request()):
            if isinstance(item, TextDeltaChunk):
                first_delta.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), 5)
    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(stub.client_hung_up.wait(), 5)


def test_deepseek_needs_no_endpoint_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-from-env")

    adapter = OpenAIChatAdapter(provider="deepseek")

    assert str(adapter.client.base_url).startswith("https://api.deepseek.com")
    assert adapter.client.api_key == "sk-from-env"


def test_unknown_provider_without_base_url_is_refused() -> None:
    with pytest.raises(ValueError, match="'vllm' has no known endpoint"):
        OpenAIChatAdapter(provider="vllm", api_key="k")
