"""OpenAIResponsesAdapter through the official ``openai`` client against a local server
speaking the Responses streaming protocol (event shapes as the SDK's
``types/responses`` models declare them)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from dsh_agent import AgentLoop, run
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
    PromptCache,
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
    UserMessage,
    create_assistant_message,
    create_system_message,
    create_tool_result_message,
    create_user_message,
)
from dsh_llm.providers import OpenAIResponsesAdapter
from dsh_llm.providers._model_string import adapter_for as adapter_from_string
from dsh_llm.providers._model_string import parse_model_string
from dsh_session import Session
from dsh_session.stores import JsonlSessionStore
from providers.frames import (
    responses_arguments_delta,
    responses_call,
    responses_completed,
    responses_created,
    responses_event,
    responses_item_added,
    responses_item_done,
    responses_message,
    responses_object,
    responses_reasoning,
    responses_summary_delta,
    responses_text_delta,
    responses_text_reply,
    responses_usage,
)
from providers.http_stub import StubServer, sse_frame, sse_reply

REPLAY = {
    "format": "openai-responses",
    "reasoning": [
        {"blocks": ["summary", "summary"], "id": "rs_1", "encryptedContent": "gAAAA-full"},
        {"blocks": ["empty"], "id": "rs_2", "encryptedContent": "gAAAA-second"},
    ],
}

REASONING_TEXT_AND_CALLS = [
    responses_created(),
    responses_event("response.in_progress", response=responses_object("in_progress")),
    # the added item's encrypted content may be incomplete: the done item's counts
    responses_item_added(0, responses_reasoning("rs_1", [], encrypted="gAAAA-partial")),
    responses_event(
        "response.reasoning_summary_part.added",
        item_id="rs_1",
        output_index=0,
        summary_index=0,
        part={"type": "summary_text", "text": ""},
    ),
    responses_summary_delta(0, 0, "Two cities, "),
    responses_summary_delta(0, 0, "two calls."),
    responses_event(
        "response.reasoning_summary_part.added",
        item_id="rs_1",
        output_index=0,
        summary_index=1,
        part={"type": "summary_text", "text": ""},
    ),
    responses_summary_delta(0, 1, "Paris first."),
    responses_item_done(
        0,
        responses_reasoning(
            "rs_1", ["Two cities, two calls.", "Paris first."], encrypted="gAAAA-full"
        ),
    ),
    responses_item_added(1, responses_message("msg_1", None, "in_progress")),
    responses_text_delta(1, "Checking both."),
    responses_item_done(1, responses_message("msg_1", "Checking both.", "completed")),
    responses_item_added(2, responses_reasoning("rs_2", [])),
    responses_item_done(2, responses_reasoning("rs_2", [], encrypted="gAAAA-second")),
    responses_item_added(3, responses_call("call_a", "weather", "", status="in_progress")),
    responses_arguments_delta(3, '{"city": '),
    responses_arguments_delta(3, '"Paris"}'),
    responses_item_done(3, responses_call("call_a", "weather", '{"city": "Paris"}')),
    responses_item_added(
        4, responses_call("call_b", "weather", "", item_id="fc_2", status="in_progress")
    ),
    responses_arguments_delta(4, '{"city": "Rome"}', item_id="fc_2"),
    responses_item_done(4, responses_call("call_b", "weather", '{"city": "Rome"}', item_id="fc_2")),
    responses_completed(responses_usage(110, 60, cached=100, reasoning=40)),
]
"""Reasoning with two summary parts, text, reasoning without a summary, two calls."""


def test_the_scripted_events_are_in_the_sdks_declared_shapes() -> None:
    """The local server speaks the protocol as the ``openai`` package declares it:
    every event the tests above stream validates against the SDK's own event models
    (which the SDK itself builds without validating)."""
    events: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    incomplete = responses_object(
        "incomplete",
        incomplete_details={"reason": "max_output_tokens"},
        usage=responses_usage(1, 2),
    )
    failed = responses_object("failed", error={"code": "server_error", "message": "down"})
    frames = [
        *REASONING_TEXT_AND_CALLS,
        *responses_text_reply("Hi"),
        responses_event("response.incomplete", response=incomplete),
        responses_event("response.failed", response=failed),
        responses_event("error", code="rate_limit_exceeded", message="Slow down", param=None),
    ]

    for frame in frames:
        data = json.loads(frame.decode().partition("data: ")[2])
        assert events.validate_python(data).type == data["type"]


def user(text: str) -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def request(*messages: Message, **options: Any) -> GenerateRequest:
    defaults: dict[str, Any] = {"provider": "openai", "model": "gpt-test"}
    return GenerateRequest(messages=messages or (user("hi"),), **{**defaults, **options})


def adapter_for(stub: StubServer, **options: Any) -> OpenAIResponsesAdapter:
    return OpenAIResponsesAdapter(
        base_url=f"{stub.url}/v1", api_key="test-key", max_retries=0, **options
    )


async def collect(chunks: AsyncIterator[StreamChunk]) -> list[StreamChunk]:
    return [item async for item in chunks]


def failure_of(chunks: list[StreamChunk]) -> LlmFailure:
    finishes = [chunk for chunk in chunks if isinstance(chunk, FinishChunk)]
    assert finishes == [chunks[-1]]
    last = chunks[-1]
    assert isinstance(last, FinishChunk)
    assert isinstance(last.reason, ErrorFinish)
    return last.reason.failure


def ending(*frames: bytes) -> list[bytes]:
    """A text response whose terminal event is ``frames``."""
    return [*responses_text_reply("Hi")[:-1], *frames]


async def test_text_deltas_stream_in_order_with_disjoint_usage(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                responses_created(),
                responses_item_added(0, responses_message("msg_1", None, "in_progress")),
                responses_text_delta(0, "Hel"),
                responses_text_delta(0, "lo"),
                responses_item_done(0, responses_message("msg_1", "Hello", "completed")),
                responses_completed(responses_usage(30, 2, cached=20, written=5)),
            ]
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks == [
        BlockStartChunk(index=0, block_type="text"),
        TextDeltaChunk(index=0, text="Hel"),
        TextDeltaChunk(index=0, text="lo"),
        BlockEndChunk(index=0, block=TextBlock(text="Hello")),
        UsageChunk(
            usage=TokenUsage(
                input_tokens=5,
                output_tokens=2,
                cache_read_tokens=20,
                cache_write_tokens=5,
                reasoning_tokens=0,
            )
        ),
        FinishChunk(reason=StopFinish()),
    ]
    assert stub.requests[0].path == "/v1/responses"


async def test_reasoning_text_and_parallel_function_calls(stub: StubServer) -> None:
    stub.script(sse_reply(REASONING_TEXT_AND_CALLS))

    chunks = await collect(adapter_for(stub).stream(request()))

    assert chunks[:4] == [
        BlockStartChunk(index=0, block_type="reasoning"),
        ReasoningDeltaChunk(index=0, text="Two cities, "),
        ReasoningDeltaChunk(index=0, text="two calls."),
        BlockStartChunk(index=1, block_type="reasoning"),
    ]
    assert (
        ToolCallDeltaChunk(index=4, call_id="call_a", name="weather", arguments_delta="") in chunks
    )
    ends = [item.block for item in chunks if isinstance(item, BlockEndChunk)]
    assert ends == [
        ReasoningBlock(text="Two cities, two calls."),
        ReasoningBlock(text="Paris first."),
        TextBlock(text="Checking both."),
        # a reasoning item without a summary: an empty block stands for it
        ReasoningBlock(text=""),
        ToolCallBlock(call_id="call_a", name="weather", arguments='{"city": "Paris"}'),
        ToolCallBlock(call_id="call_b", name="weather", arguments='{"city": "Rome"}'),
    ]
    assert chunks[-2:] == [
        UsageChunk(
            usage=TokenUsage(
                input_tokens=10,
                output_tokens=60,
                cache_read_tokens=100,
                cache_write_tokens=0,
                reasoning_tokens=40,
            )
        ),
        FinishChunk(reason=ToolCallsFinish(), replay_state=REPLAY),
    ]


async def test_request_carries_instructions_tools_and_options(stub: StubServer) -> None:
    stub.script(sse_reply(responses_text_reply("ok")))
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    history = (create_system_message(content="Answer in French."), user("Weather in Paris?"))

    await collect(
        adapter_for(stub, reasoning_summary="auto").stream(
            request(
                *history,
                system="Be brief.",
                tools=(ToolSchema(name="weather", description="Weather", parameters=schema),),
                max_tokens=500,
                temperature=1.0,
                top_p=0.95,
                reasoning_effort="low",
                prompt_cache=PromptCache(key="user-42", retention="long"),
            )
        )
    )

    [received] = stub.requests
    assert received.path == "/v1/responses"
    assert received.body == {
        "model": "gpt-test",
        "input": [
            {"role": "system", "content": "Answer in French."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "instructions": "Be brief.",
        "tools": [
            {
                "type": "function",
                "name": "weather",
                "description": "Weather",
                "parameters": schema,
                "strict": False,
            }
        ],
        "max_output_tokens": 500,
        "temperature": 1.0,
        "top_p": 0.95,
        "reasoning": {"effort": "low", "summary": "auto"},
        "prompt_cache_key": "user-42",
        "prompt_cache_retention": "24h",
    }


async def test_without_encrypted_reasoning_nothing_is_included(stub: StubServer) -> None:
    stub.script(sse_reply(responses_text_reply("ok")))

    await collect(adapter_for(stub, encrypted_reasoning=False).stream(request()))

    assert stub.bodies[0] == {
        "model": "gpt-test",
        "input": [{"role": "user", "content": "hi"}],
        "stream": True,
        "store": False,
    }


async def test_reasoning_is_replayed_exactly_to_the_same_model(stub: StubServer) -> None:
    stub.script(sse_reply(REASONING_TEXT_AND_CALLS), sse_reply(responses_text_reply("18°C.")))
    adapter = adapter_for(stub)
    question = user("Weather in Paris and Rome?")
    assembler = BlockAssembler()
    async for item in adapter.stream(request(question)):
        assembler.push(item)
    answer = assembler.message(provider="openai", model="gpt-test")
    history = (
        question,
        answer,
        create_tool_result_message(call_id="call_a", content="18°C"),
        create_tool_result_message(call_id="call_b", content="city not found", is_error=True),
        user("Also in Celsius please."),
    )

    await collect(adapter.stream(request(*history)))

    assert stub.bodies[1]["input"] == [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [
                {"type": "summary_text", "text": "Two cities, two calls."},
                {"type": "summary_text", "text": "Paris first."},
            ],
            "encrypted_content": "gAAAA-full",
        },
        {"role": "assistant", "content": "Checking both."},
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAA-second"},
        {
            "type": "function_call",
            "call_id": "call_a",
            "name": "weather",
            "arguments": '{"city": "Paris"}',
        },
        {
            "type": "function_call",
            "call_id": "call_b",
            "name": "weather",
            "arguments": '{"city": "Rome"}',
        },
        {"type": "function_call_output", "call_id": "call_a", "output": "18°C"},
        {"type": "function_call_output", "call_id": "call_b", "output": "city not found"},
        {"role": "user", "content": "Also in Celsius please."},
    ]


async def test_reasoning_text_parts_are_replayed_as_content(stub: StubServer) -> None:
    """Servers of open-weight models stream the reasoning itself
    (``response.reasoning_text.delta``) and take it back as the item's ``content``."""
    reasoning = {**responses_reasoning("rs_9", []), "content": []}
    stub.script(
        sse_reply(
            [
                responses_created(),
                responses_item_added(0, reasoning),
                responses_event(
                    "response.reasoning_text.delta",
                    item_id="rs_9",
                    output_index=0,
                    content_index=0,
                    delta="Let me think.",
                ),
                responses_item_done(0, reasoning),
                *responses_text_reply("Done.")[1:],
            ]
        ),
        sse_reply(responses_text_reply("ok")),
    )
    adapter = adapter_for(stub)
    assembler = BlockAssembler()
    async for item in adapter.stream(request()):
        assembler.push(item)
    answer = assembler.message(provider="openai", model="gpt-test")

    await collect(adapter.stream(request(user("hi"), answer, user("and?"))))

    assert stub.bodies[1]["input"][1:3] == [
        {
            "type": "reasoning",
            "id": "rs_9",
            "summary": [],
            "content": [{"type": "reasoning_text", "text": "Let me think."}],
        },
        {"role": "assistant", "content": "Done."},
    ]


@pytest.mark.parametrize(
    ("provider", "model", "state"),
    [
        ("openai", "gpt-older", REPLAY),
        ("deepseek", "gpt-test", REPLAY),
        ("openai", "gpt-test", {**REPLAY, "format": "openai-chat"}),
        ("openai", "gpt-test", {**REPLAY, "reasoning": REPLAY["reasoning"][:1]}),
        ("openai", "gpt-test", {**REPLAY, "reasoning": [{"blocks": ["summary"] * 3}]}),
    ],
    ids=["another model", "another provider", "another format", "too few", "no id"],
)
async def test_reasoning_that_is_not_this_models_or_does_not_line_up_is_not_replayed(
    stub: StubServer, provider: str, model: str, state: dict[str, Any]
) -> None:
    stub.script(sse_reply(responses_text_reply("ok")))
    answer = create_assistant_message(
        content=[
            ReasoningBlock(text="Two cities, two calls."),
            ReasoningBlock(text="Paris first."),
            ReasoningBlock(text=""),
            ToolCallBlock(call_id="call_a", name="weather", arguments='{"city": "Paris"}'),
        ],
        source={"provider": provider, "model": model, "replayState": state},
    )
    result = create_tool_result_message(call_id="call_a", content="18°C")

    await collect(adapter_for(stub).stream(request(user("Weather?"), answer, result)))

    assert stub.bodies[0]["input"][1:] == [
        {
            "type": "function_call",
            "call_id": "call_a",
            "name": "weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_a", "output": "18°C"},
    ]


async def test_images_travel_as_input_images(stub: StubServer) -> None:
    stub.script(sse_reply(responses_text_reply("A cat.")))
    photo = create_user_message(
        content=[
            TextBlock(text="What is this?"),
            ImageBlock(media_type="image/png", data="iVBORw0KGgo="),
            ImageBlock(media_type="image/jpeg", url="https://example.com/cat.jpg"),
        ],
        source={"kind": "user"},
    )
    call = create_assistant_message(
        content=[ToolCallBlock(call_id="call_s", name="screenshot", arguments="{}")],
        source={"provider": "openai", "model": "gpt-test"},
    )
    shot = create_tool_result_message(
        call_id="call_s",
        content=[TextBlock(text="the screen"), ImageBlock(media_type="image/png", data="AAAA")],
    )

    await collect(adapter_for(stub).stream(request(photo, call, shot)))

    first, _, output = stub.bodies[0]["input"]
    assert first == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What is this?"},
            {
                "type": "input_image",
                "image_url": "data:image/png;base64,iVBORw0KGgo=",
                "detail": "auto",
            },
            {
                "type": "input_image",
                "image_url": "https://example.com/cat.jpg",
                "detail": "auto",
            },
        ],
    }
    assert output == {
        "type": "function_call_output",
        "call_id": "call_s",
        "output": [
            {"type": "input_text", "text": "the screen"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"},
        ],
    }


async def test_stop_sequences_are_refused_before_anything_is_sent(stub: StubServer) -> None:
    chunks = await collect(adapter_for(stub).stream(request(stop=("END",))))

    reported = failure_of(chunks)
    assert reported.code == "INVALID_REQUEST"
    assert "has no stop sequences" in reported.message and "'END'" in reported.message
    assert stub.requests == []


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("max_output_tokens", MaxTokensFinish()),
        (
            "content_filter",
            ErrorFinish(
                failure=LlmFailure(
                    message="the provider's content filter stopped the response",
                    code="CONTENT_FILTER",
                )
            ),
        ),
        (
            "max_messages",
            ErrorFinish(
                failure=LlmFailure(
                    message="the model stopped for a reason this adapter does not know: "
                    "'max_messages'",
                    code="MAX_MESSAGES",
                )
            ),
        ),
    ],
)
async def test_an_incomplete_response_ends_by_its_reason(
    stub: StubServer, reason: str, finish: FinishReason
) -> None:
    incomplete = responses_object(
        "incomplete", incomplete_details={"reason": reason}, usage=responses_usage(5, 9)
    )
    stub.script(sse_reply(ending(responses_event("response.incomplete", response=incomplete))))

    chunks = await collect(adapter_for(stub).stream(request()))

    assert BlockEndChunk(index=0, block=TextBlock(text="Hi")) in chunks
    assert (
        UsageChunk(
            usage=TokenUsage(
                input_tokens=5,
                output_tokens=9,
                cache_read_tokens=0,
                cache_write_tokens=0,
                reasoning_tokens=0,
            )
        )
        in chunks
    )
    assert chunks[-1] == FinishChunk(reason=finish)


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        ("server_error", "The server had an error", "SERVER"),
        ("rate_limit_exceeded", "Rate limit reached", "RATE_LIMIT"),
        ("rate_limit_exceeded", "You exceeded your current quota", "QUOTA"),
        ("invalid_prompt", "Invalid prompt", "INVALID_REQUEST"),
        (
            "invalid_prompt",
            "Your input exceeds the context window of this model",
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        ("invalid_image_format", "Unsupported image", "INVALID_REQUEST"),
        ("bio_policy", "Refused by policy", "CONTENT_FILTER"),
        ("some_future_code", "Something else", "SERVER"),
    ],
)
async def test_a_failed_response_ends_in_the_code_its_error_names(
    stub: StubServer, code: str, message: str, expected: str
) -> None:
    failed = responses_object("failed", error={"code": code, "message": message})
    stub.script(sse_reply(ending(responses_event("response.failed", response=failed))))

    reported = failure_of(await collect(adapter_for(stub).stream(request())))

    assert reported.code == expected
    assert reported.message == f"the response failed: {message} ({code})"


async def test_an_error_event_ends_the_call_at_once(stub: StubServer) -> None:
    error = responses_event("error", code="rate_limit_exceeded", message="Slow down", param=None)
    stub.script(sse_reply([responses_created(), error], then="hold"))

    reported = failure_of(await collect(adapter_for(stub, timeout=5.0).stream(request())))

    assert (reported.code, reported.message) == (
        "RATE_LIMIT",
        "error event in the stream: Slow down (rate_limit_exceeded)",
    )
    await asyncio.wait_for(stub.client_hung_up.wait(), timeout=10)


async def test_an_error_payload_in_the_older_shape_is_a_provider_error(stub: StubServer) -> None:
    error = {"error": {"type": "server_error", "message": "The server had an error"}}
    stub.script(sse_reply([responses_created(), responses_event("error", **error)]))

    reported = failure_of(await collect(adapter_for(stub).stream(request())))

    assert reported.code == "SERVER"
    assert "The server had an error" in reported.message


async def test_a_refusal_is_an_error_finish(stub: StubServer) -> None:
    refusal = responses_event(
        "response.refusal.delta",
        item_id="msg_1",
        output_index=0,
        content_index=0,
        delta="I can't help with that.",
    )
    stub.script(
        sse_reply(
            [
                responses_created(),
                responses_item_added(0, responses_message("msg_1", None, "in_progress")),
                refusal,
                responses_item_done(0, responses_message("msg_1", None, "completed")),
                responses_completed(),
            ]
        )
    )

    reported = failure_of(await collect(adapter_for(stub).stream(request())))

    assert (reported.code, reported.message) == (
        "REFUSAL",
        "the model refused to answer: I can't help with that.",
    )


async def test_a_stream_without_a_terminal_event_was_cut_short(stub: StubServer) -> None:
    stub.script(sse_reply(responses_text_reply("Hi")[:-1]))

    reported = failure_of(await collect(adapter_for(stub).stream(request())))

    assert reported.code == "STREAM_CLOSED"
    assert "no response.completed" in reported.message


async def test_events_it_does_not_know_are_skipped_and_reading_stops_at_completed(
    stub: StubServer,
) -> None:
    hosted = responses_item_added(1, {"type": "web_search_call", "id": "ws_1", "status": "x"})
    late = responses_text_delta(0, " late")
    stub.script(
        sse_reply(
            [
                responses_created(),
                responses_event("response.future_event", anything={"at": "all"}),
                responses_event("keepalive"),
                hosted,
                *responses_text_reply("Hi")[1:],
                late,
            ],
            then="hold",
        )
    )

    chunks = await collect(adapter_for(stub, timeout=5.0).stream(request()))

    assert [chunk.text for chunk in chunks if isinstance(chunk, TextDeltaChunk)] == ["Hi"]
    assert chunks[-1] == FinishChunk(reason=StopFinish())
    await asyncio.wait_for(stub.client_hung_up.wait(), timeout=10)


async def test_a_call_sent_whole_in_its_done_event_is_taken_from_it(stub: StubServer) -> None:
    call = responses_call("call_w", "weather", '{"city": "Oslo"}')
    stub.script(
        sse_reply([responses_created(), responses_item_done(0, call), responses_completed()])
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    ends = [item.block for item in chunks if isinstance(item, BlockEndChunk)]
    assert ends == [ToolCallBlock(call_id="call_w", name="weather", arguments='{"city": "Oslo"}')]
    assert chunks[-1] == FinishChunk(reason=ToolCallsFinish())


async def test_text_and_reasoning_sent_only_in_done_events_are_taken_from_them(
    stub: StubServer,
) -> None:
    stub.script(
        sse_reply(
            [
                responses_created(),
                responses_item_done(0, responses_reasoning("rs_1", ["Short."], encrypted="e")),
                responses_item_done(1, responses_message("msg_1", "Whole.", "completed")),
                responses_completed(),
            ]
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    ends = [item.block for item in chunks if isinstance(item, BlockEndChunk)]
    assert ends == [ReasoningBlock(text="Short."), TextBlock(text="Whole.")]
    finish = chunks[-1]
    assert isinstance(finish, FinishChunk)
    assert finish.replay_state == {
        "format": "openai-responses",
        "reasoning": ({"blocks": ("summary",), "id": "rs_1", "encryptedContent": "e"},),
    }


@pytest.mark.parametrize(
    ("frame", "field"),
    [
        (responses_text_delta(0, 42), "delta"),  # type: ignore[arg-type]
        (
            responses_event(
                "response.output_text.delta", output_index="first", content_index=0, delta="x"
            ),
            "output_index",
        ),
        (responses_event("response.output_item.added", output_index=0, item=[1]), "item"),
        (
            responses_completed({**responses_usage(3, 2), "output_tokens": -2}),
            "response.usage.output_tokens",
        ),
        (
            responses_completed(
                {**responses_usage(3, 2), "input_tokens_details": {"cached_tokens": "many"}}
            ),
            "response.usage.input_tokens_details.cached_tokens",
        ),
        (responses_item_done(0, responses_call("call\x00", "f", "{}")), "item.call_id"),
    ],
    ids=["delta", "output_index", "item", "output_tokens", "cached_tokens", "call_id"],
)
async def test_a_value_of_the_wrong_shape_is_a_malformed_response_naming_its_field(
    stub: StubServer, frame: bytes, field: str
) -> None:
    stub.script(sse_reply([responses_created(), frame, responses_completed()]))

    reported = failure_of(await collect(adapter_for(stub).stream(request())))

    assert reported.code == "MALFORMED_RESPONSE"
    assert f"malformed response: {field} " in reported.message


async def test_a_call_id_and_name_with_lone_surrogates_are_replaced(stub: StubServer) -> None:
    call = responses_call("call_\ude00", "f\ud83d", "{}")
    stub.script(
        sse_reply([responses_created(), responses_item_done(0, call), responses_completed()])
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    [end] = [chunk for chunk in chunks if isinstance(chunk, BlockEndChunk)]
    assert end.block == ToolCallBlock(call_id="call_\ufffd", name="f\ufffd", arguments="{}")


def test_the_model_string_builds_the_adapter_for_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    adapter = adapter_from_string("openai-responses:gpt-5", reasoning_summary="auto")

    assert isinstance(adapter, OpenAIResponsesAdapter)
    assert (adapter.provider, adapter.model) == ("openai", "gpt-5")
    assert parse_model_string("openai-responses:gpt-5").model == "gpt-5"


async def test_an_agent_loop_from_the_model_string_talks_to_responses(
    stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{stub.url}/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a loopback server needs none
    stub.script(sse_reply(responses_text_reply("hello")))

    agent = AgentLoop(session=Session.create(), model="openai-responses:gpt-test")
    result = await run(agent, user("hi"))

    assert result.final_response == "hello"
    assert stub.requests[0].path == "/v1/responses"
    headers = [
        (event.data.header.config.provider, event.data.header.config.model)
        for event in agent.session.events
        if event.type == "request/header"
    ]
    assert headers == [("openai", "gpt-test")]
    await agent.aclose()


async def test_the_reasoning_replayed_after_a_reload_is_the_reasoning_received(
    stub: StubServer, tmp_path: Path
) -> None:
    """The replay state goes through the durable log (JSON) and back: a process that
    loads the session sends the reasoning items exactly as the live one did."""
    stub.script(
        sse_reply(REASONING_TEXT_AND_CALLS),
        sse_reply(responses_text_reply("18°C.")),  # after the (unknown) tools' results
    )
    adapter = adapter_for(stub)
    async with JsonlSessionStore(tmp_path) as store:
        agent = AgentLoop(
            session=Session.create(), adapter=adapter, provider="openai", model="gpt-test"
        )
        store.attach(agent.session)
        await run(agent, user("Weather in Paris and Rome?"))
        await store.flush(agent.session)
        store.detach(agent.session)
        loaded = await store.load(agent.session.header.id)
        await agent.aclose()
    follow_up = user("And tomorrow?")

    await collect(adapter.stream(request(*agent.session.derive_messages(), follow_up)))
    await collect(adapter.stream(request(*loaded.derive_messages(), follow_up)))

    from_memory, from_disk = stub.bodies[2:]
    assert from_disk == from_memory
    assert [item.get("type") for item in from_disk["input"]] == [
        None,
        "reasoning",
        None,
        "reasoning",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
        None,
        None,
    ]
    assert from_disk["input"][1]["encrypted_content"] == "gAAAA-full"


async def test_a_server_that_numbers_no_items_is_read_by_item_id(stub: StubServer) -> None:
    """llama.cpp's ``/v1/responses`` sends no ``output_index`` or ``content_index``:
    its events name their item by id."""

    def event(kind: str, **fields: Any) -> bytes:
        return sse_frame({"type": kind, **fields}, event=kind)

    message = {"type": "message", "id": "msg_l", "role": "assistant", "content": []}
    call = {"type": "function_call", "id": "fc_l", "call_id": "call_l", "name": "add"}
    stub.script(
        sse_reply(
            [
                event("response.created", response={"id": "r", "status": "in_progress"}),
                event("response.output_item.added", item=message),
                event("response.output_text.delta", item_id="msg_l", delta="Sum: "),
                event("response.output_item.added", item={**call, "arguments": ""}),
                event("response.function_call_arguments.delta", item_id="fc_l", delta='{"a": 2'),
                event("response.output_text.delta", item_id="msg_l", delta="coming"),
                event("response.function_call_arguments.delta", item_id="fc_l", delta="}"),
                event("response.output_item.done", item={**call, "arguments": '{"a": 2}'}),
                event("response.output_item.done", item=message),
                event("response.completed", response={"id": "r", "status": "completed"}),
            ]
        )
    )

    chunks = await collect(adapter_for(stub).stream(request()))

    ends = [item.block for item in chunks if isinstance(item, BlockEndChunk)]
    assert ends == [
        ToolCallBlock(call_id="call_l", name="add", arguments='{"a": 2}'),
        TextBlock(text="Sum: coming"),
    ]
    assert chunks[-1] == FinishChunk(reason=ToolCallsFinish())


async def test_an_event_naming_no_item_at_all_is_a_malformed_response(stub: StubServer) -> None:
    delta = sse_frame({"type": "response.output_text.delta", "delta": "x"})
    stub.script(sse_reply([responses_created(), delta, responses_completed()]))

    reported = failure_of(await collect(adapter_for(stub).stream(request())))

    assert reported.code == "MALFORMED_RESPONSE"
    assert "output_index is missing, and so is item_id" in reported.message
