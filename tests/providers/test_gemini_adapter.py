"""GeminiAdapter through the official ``google-genai`` client against a local server
speaking ``streamGenerateContent?alt=sse`` (frames in providers/gemini_frames.py):
the request's wire shape, the stream's blocks, usage and finish reasons, thought
signatures kept as replay state and sent back, and Google's error bodies."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest

from dsh_llm import (
    BlockEndChunk,
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    LlmFailure,
    MaxTokensFinish,
    MissingApiKeyError,
    ReasoningBlock,
    StopFinish,
    StreamChunk,
    TextBlock,
    TextDeltaChunk,
    ToolCallBlock,
    ToolCallsFinish,
    ToolSchema,
    UsageChunk,
    create_assistant_message,
    create_system_message,
    create_tool_result_message,
    create_user_message,
)
from dsh_llm.providers import GeminiAdapter
from providers.gemini_frames import (
    MODEL,
    PATH,
    gemini_chunk,
    gemini_error_after_data,
    gemini_error_body,
    gemini_text_reply,
    gemini_usage,
)
from providers.http_stub import Reply, StubServer, json_reply, sse_reply

SIGNATURE = base64.b64encode(b"\xfb\xff\xbe-signed-thought").decode()
"""A signature whose standard base64 holds ``+`` and ``/``, as Google's does."""


def adapter(stub: StubServer, **options: Any) -> GeminiAdapter:
    return GeminiAdapter(base_url=stub.url, api_key="g-key", model=MODEL, **options)


def request(*messages: Any, model: str = MODEL, **fields: Any) -> GenerateRequest:
    return GenerateRequest(provider="gemini", model=model, messages=messages, **fields)


def question(text: str = "Weather in Paris?") -> Any:
    return create_user_message(content=text, source={"kind": "user"})


async def collect(stream: Any) -> list[StreamChunk]:
    return [chunk async for chunk in stream]


def finish_of(chunks: list[StreamChunk]) -> FinishChunk:
    last = chunks[-1]
    assert isinstance(last, FinishChunk)
    return last


def failure_of(chunks: list[StreamChunk]) -> LlmFailure:
    reason = finish_of(chunks).reason
    assert isinstance(reason, ErrorFinish)
    return reason.failure


def blocks_of(chunks: list[StreamChunk]) -> list[Any]:
    return [chunk.block for chunk in chunks if isinstance(chunk, BlockEndChunk)]


async def test_text_streams_as_one_block_then_usage_then_stop(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                gemini_chunk({"text": "Sunny "}, usage=gemini_usage(12, 1)),
                gemini_chunk({"text": "today."}, usage=gemini_usage(12, 3)),
                gemini_chunk(
                    {"text": ""},
                    finish_reason="STOP",
                    usage=gemini_usage(12, 4, cachedContentTokenCount=8, thoughtsTokenCount=20),
                ),
            ]
        )
    )

    chunks = await collect(adapter(stub).stream(request(question())))

    assert [c.text for c in chunks if isinstance(c, TextDeltaChunk)] == ["Sunny ", "today."]
    assert blocks_of(chunks) == [TextBlock(text="Sunny today.")]
    [usage] = [c.usage for c in chunks if isinstance(c, UsageChunk)]
    assert (usage.input_tokens, usage.cache_read_tokens) == (4, 8)
    assert (usage.output_tokens, usage.reasoning_tokens) == (24, 20)
    finish = finish_of(chunks)
    assert finish.reason == StopFinish() and finish.replay_state is None
    assert stub.requests[0].path == PATH
    assert stub.requests[0].headers["x-goog-api-key"] == "g-key"


async def test_request_carries_system_contents_tools_and_generation_config(
    stub: StubServer,
) -> None:
    stub.script(sse_reply(gemini_text_reply("ok")))
    tool = ToolSchema(
        name="weather",
        description="The weather in a city.",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    call = ToolCallBlock(call_id="call-7", name="weather", arguments='{"city": "Paris"}')
    answer = create_assistant_message(content=[call], source={"provider": "other", "model": "x"})
    messages = (
        question(),
        create_system_message(content="Use metric units."),
        answer,
        create_tool_result_message(call_id="call-7", content="18°C"),
        question("And tomorrow?"),
    )
    gemini = adapter(stub, thinking={"include_thoughts": True})

    await collect(
        gemini.stream(
            request(
                *messages,
                system="Answer briefly.",
                tools=(tool,),
                max_tokens=256,
                temperature=0.2,
                top_p=0.9,
                stop=("END",),
                reasoning_effort="low",
            )
        )
    )

    body = stub.bodies[0]
    assert body["systemInstruction"] == {
        "parts": [{"text": "Answer briefly.\n\nUse metric units."}]
    }
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        {
            "role": "model",
            "parts": [
                {"functionCall": {"id": "call-7", "name": "weather", "args": {"city": "Paris"}}}
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "call-7",
                        "name": "weather",
                        "response": {"output": "18°C"},
                    }
                },
                {"text": "And tomorrow?"},
            ],
        },
    ]
    # The SDK writes the fields of a declaration and of the thinking config by their
    # proto names, which Google's JSON parser takes as it takes the camelCase ones.
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "weather",
                    "description": "The weather in a city.",
                    "parameters_json_schema": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                    },
                }
            ]
        }
    ]
    assert body["generationConfig"] == {
        "maxOutputTokens": 256,
        "temperature": 0.2,
        "topP": 0.9,
        "stopSequences": ["END"],
        "thinkingConfig": {"include_thoughts": True, "thinking_level": "LOW"},
    }


def thinking_then_parallel_calls() -> list[bytes]:
    """Gemini 3's documented shape: thought summaries, then parallel calls, the
    signature on the first call only, and no call ids."""
    return [
        gemini_chunk({"text": "The user wants ", "thought": True}),
        gemini_chunk({"text": "two cities.", "thought": True}),
        gemini_chunk(
            {
                "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                "thoughtSignature": SIGNATURE,
            },
            {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}},
        ),
        gemini_chunk(finish_reason="STOP", usage=gemini_usage(30, 12, thoughtsTokenCount=9)),
    ]


async def test_thoughts_and_parallel_calls_keep_their_signature_as_replay_state(
    stub: StubServer,
) -> None:
    stub.script(sse_reply(thinking_then_parallel_calls()))

    chunks = await collect(adapter(stub).stream(request(question())))

    thought, paris, oslo = blocks_of(chunks)
    assert thought == ReasoningBlock(text="The user wants two cities.")
    assert (paris.name, paris.arguments) == ("weather", '{"city": "Paris"}')
    assert (oslo.name, oslo.arguments) == ("weather", '{"city": "Oslo"}')
    assert paris.call_id != oslo.call_id  # made up, the wire sent none
    finish = finish_of(chunks)
    assert finish.reason == ToolCallsFinish()
    assert finish.replay_state == {
        "format": "gemini",
        "signatures": (None, SIGNATURE, None),
        "unnamedCalls": (paris.call_id, oslo.call_id),
    }


async def signed_turn(stub: StubServer) -> tuple[Any, Any]:
    """Run the first turn of a tool round trip; return the assistant message the
    assembler would store, and the tool results for it."""
    stub.script(sse_reply(thinking_then_parallel_calls()))
    chunks = await collect(adapter(stub).stream(request(question())))
    finish = finish_of(chunks)
    blocks = blocks_of(chunks)
    message = create_assistant_message(
        content=blocks,
        source={"provider": "gemini", "model": MODEL, "replayState": finish.replay_state},
    )
    results = [
        create_tool_result_message(call_id=block.call_id, content=f"sunny in {city}")
        for block, city in zip(blocks[1:], ["Paris", "Oslo"], strict=True)
    ]
    return message, results


async def test_thoughts_and_signatures_go_back_to_the_same_model_as_they_came(
    stub: StubServer,
) -> None:
    message, results = await signed_turn(stub)
    stub.script(sse_reply(gemini_text_reply("Sunny in both.")))

    await collect(adapter(stub).stream(request(question(), message, *results)))

    model_turn, answers = stub.bodies[1]["contents"][1:]
    assert model_turn == {
        "role": "model",
        "parts": [
            {"text": "The user wants two cities.", "thought": True},
            {
                "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                "thoughtSignature": model_turn["parts"][1]["thoughtSignature"],
            },
            {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}},
        ],
    }
    # The very bytes Google signed; the SDK spells them in URL-safe base64, which
    # the API reads as it reads standard base64.
    sent = model_turn["parts"][1]["thoughtSignature"]
    assert base64.urlsafe_b64decode(sent) == base64.b64decode(SIGNATURE)
    assert answers == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "weather", "response": {"output": "sunny in Paris"}}},
            {"functionResponse": {"name": "weather", "response": {"output": "sunny in Oslo"}}},
        ],
    }


@pytest.mark.parametrize(("provider", "model"), [("gemini", "gemini-other"), ("vertex", MODEL)])
async def test_thoughts_and_signatures_are_not_sent_to_another_model(
    stub: StubServer, provider: str, model: str
) -> None:
    message, results = await signed_turn(stub)
    stub.script(sse_reply(gemini_text_reply("ok")))
    other = GenerateRequest(
        provider=provider, model=model, messages=(question(), message, *results)
    )

    await collect(adapter(stub).stream(other))

    model_turn = stub.bodies[1]["contents"][1]
    assert model_turn["parts"] == [
        {"functionCall": {"id": part.call_id, "name": "weather", "args": {"city": city}}}
        for part, city in zip(message.content[1:], ["Paris", "Oslo"], strict=True)
    ]


async def test_signatures_that_no_longer_line_up_are_not_sent(stub: StubServer) -> None:
    message, results = await signed_turn(stub)
    rewritten = create_assistant_message(
        content=list(message.content[1:]),  # the thought was dropped
        source={"provider": "gemini", "model": MODEL, "replayState": message.source.replay_state},
    )
    stub.script(sse_reply(gemini_text_reply("ok")))

    await collect(adapter(stub).stream(request(question(), rewritten, *results)))

    parts = stub.bodies[1]["contents"][1]["parts"]
    assert [part.get("thoughtSignature") for part in parts] == [None, None]
    assert all("functionCall" in part for part in parts)


async def test_a_signature_on_an_empty_final_part_belongs_to_the_text_before_it(
    stub: StubServer,
) -> None:
    stub.script(
        sse_reply(
            [
                gemini_chunk({"text": "Paris is "}),
                gemini_chunk({"text": "sunny."}),
                gemini_chunk({"text": "", "thoughtSignature": SIGNATURE}, finish_reason="STOP"),
            ]
        )
    )

    chunks = await collect(adapter(stub).stream(request(question())))

    assert blocks_of(chunks) == [TextBlock(text="Paris is sunny.")]
    assert finish_of(chunks).replay_state == {"format": "gemini", "signatures": (SIGNATURE,)}


async def test_call_ids_the_model_sent_go_back_with_the_call_and_its_response(
    stub: StubServer,
) -> None:
    call = {"id": "fc-1", "name": "weather", "args": {"city": "Rome"}}
    stub.script(
        sse_reply([gemini_chunk({"functionCall": call}, finish_reason="STOP")]),
        sse_reply(gemini_text_reply("ok")),
    )
    gemini = adapter(stub)
    chunks = await collect(gemini.stream(request(question())))
    [block] = blocks_of(chunks)
    assert block.call_id == "fc-1" and finish_of(chunks).replay_state is None
    message = create_assistant_message(
        content=[block], source={"provider": "gemini", "model": MODEL}
    )
    result = create_tool_result_message(call_id="fc-1", content="warm", is_error=True)

    await collect(gemini.stream(request(question(), message, result)))

    assert stub.bodies[1]["contents"][1:] == [
        {"role": "model", "parts": [{"functionCall": call}]},
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "fc-1",
                        "name": "weather",
                        "response": {"error": "warm"},
                    }
                }
            ],
        },
    ]


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("STOP", StopFinish()),
        ("MAX_TOKENS", MaxTokensFinish()),
    ],
)
async def test_finish_reasons(stub: StubServer, reason: str, expected: Any) -> None:
    stub.script(sse_reply(gemini_text_reply("Hi", finish_reason=reason)))

    chunks = await collect(adapter(stub).stream(request(question())))

    assert finish_of(chunks).reason == expected


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        ("SAFETY", "CONTENT_FILTER"),
        ("RECITATION", "CONTENT_FILTER"),
        ("PROHIBITED_CONTENT", "CONTENT_FILTER"),
        ("MALFORMED_FUNCTION_CALL", "MALFORMED_FUNCTION_CALL"),
        ("OTHER", "OTHER"),
    ],
)
async def test_stopping_reasons_that_are_failures(stub: StubServer, reason: str, code: str) -> None:
    stub.script(sse_reply(gemini_text_reply("", finish_reason=reason)))

    reported = failure_of(await collect(adapter(stub).stream(request(question()))))

    assert reported.code == code
    assert reason in reported.message


async def test_a_blocked_prompt_is_a_content_filter_failure(stub: StubServer) -> None:
    blocked = (
        b'data: {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": '
        b'{"promptTokenCount": 7, "totalTokenCount": 7}}\r\n\r\n'
    )
    stub.script(sse_reply([blocked]))

    reported = failure_of(await collect(adapter(stub).stream(request(question()))))

    assert reported.code == "CONTENT_FILTER"
    assert reported.message == "the provider blocked the prompt (SAFETY)"


async def test_a_stream_without_a_finish_reason_was_cut_short(stub: StubServer) -> None:
    stub.script(sse_reply([gemini_chunk({"text": "Hel"})]))

    reported = failure_of(await collect(adapter(stub).stream(request(question()))))

    assert reported.code == "STREAM_CLOSED"


async def test_a_rate_limit_takes_googles_retry_delay(stub: StubServer) -> None:
    retry_info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}
    stub.script(
        json_reply(
            429,
            gemini_error_body(
                429, "Resource has been exhausted.", "RESOURCE_EXHAUSTED", details=[retry_info]
            ),
        )
    )

    reported = failure_of(await collect(adapter(stub).stream(request(question()))))

    assert (reported.code, reported.status) == ("RATE_LIMIT", 429)
    assert reported.provider_retry_after_ms == 37_000
    assert reported.message == "HTTP 429: Resource has been exhausted."


@pytest.mark.parametrize(
    ("status", "message", "google_status", "code"),
    [
        (
            400,
            "API key not valid. Please pass a valid API key.",
            "INVALID_ARGUMENT",
            "INVALID_REQUEST",
        ),
        (
            400,
            "The input token count (1200000) exceeds the maximum number of tokens allowed "
            "(1048576). The request is too long for the model context window.",
            "INVALID_ARGUMENT",
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        (403, "Permission denied", "PERMISSION_DENIED", "AUTH"),
        (404, "models/nope is not found for API version v1beta", "NOT_FOUND", "HTTP_404"),
        (
            429,
            "You exceeded your current quota, please check your plan.",
            "RESOURCE_EXHAUSTED",
            "QUOTA",
        ),
        (500, "An internal error has occurred.", "INTERNAL", "SERVER"),
        (503, "The model is overloaded. Please try again later.", "UNAVAILABLE", "SERVER"),
    ],
)
async def test_googles_error_bodies_get_the_shared_codes(
    stub: StubServer, status: int, message: str, google_status: str, code: str
) -> None:
    stub.script(json_reply(status, gemini_error_body(status, message, google_status)))

    reported = failure_of(await collect(adapter(stub).stream(request(question()))))

    assert (reported.code, reported.status) == (code, status)
    assert reported.message == f"HTTP {status}: {message}"


async def test_an_error_after_the_first_chunks_is_an_error_event(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                gemini_chunk({"text": "Hel"}),
                gemini_error_after_data(503, "The model is overloaded.", "UNAVAILABLE"),
            ]
        )
    )

    chunks = await collect(adapter(stub).stream(request(question())))

    reported = failure_of(chunks)
    assert (reported.code, reported.status) == ("SERVER", None)
    assert reported.message == "error event in the stream: The model is overloaded."
    assert [c.text for c in chunks if isinstance(c, TextDeltaChunk)] == ["Hel"]


async def test_usage_that_is_not_a_count_names_the_field(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [gemini_chunk({"text": "x"}, finish_reason="STOP", usage={"promptTokenCount": -1})]
        )
    )

    reported = failure_of(await collect(adapter(stub).stream(request(question()))))

    assert reported.code == "MALFORMED_RESPONSE"
    assert "usageMetadata.promptTokenCount" in reported.message


async def test_a_chunk_of_the_wrong_shape_is_a_malformed_response(stub: StubServer) -> None:
    stub.script(sse_reply([gemini_chunk({"text": 42})]))

    reported = failure_of(await collect(adapter(stub).stream(request(question()))))

    assert reported.code == "MALFORMED_RESPONSE"
    assert "parts.0.text" in reported.message


async def test_keepalive_comments_between_chunks_are_not_data(stub: StubServer) -> None:
    frames = gemini_text_reply("Hi")
    stub.script(sse_reply([frames[0], b": keep-alive\r\n\r\n", frames[1]]))

    chunks = await collect(adapter(stub).stream(request(question())))

    assert finish_of(chunks).reason == StopFinish()
    assert blocks_of(chunks) == [TextBlock(text="Hi")]


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"reasoning_effort": "extreme"}, "reasoning_effort 'extreme'"),
    ],
)
async def test_a_request_the_api_cannot_carry_fails_before_any_request(
    stub: StubServer, fields: dict[str, Any], why: str
) -> None:
    reported = failure_of(await collect(adapter(stub).stream(request(question(), **fields))))

    assert reported.code == "INVALID_REQUEST"
    assert why in reported.message
    assert stub.requests == []


async def test_a_tool_result_without_its_call_is_refused_naming_it(stub: StubServer) -> None:
    orphan = create_tool_result_message(call_id="call-lost", content="?")

    reported = failure_of(await collect(adapter(stub).stream(request(question(), orphan))))

    assert reported.code == "INVALID_REQUEST"
    assert "'call-lost'" in reported.message and orphan.id in reported.message
    assert stub.requests == []


async def test_cancelling_the_consumer_closes_the_connection(stub: StubServer) -> None:
    stub.script(sse_reply([gemini_chunk({"text": "Hel"})], then="hold"))
    stream = adapter(stub).stream(request(question()))

    async def consume() -> None:
        async for _ in stream:
            pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    await asyncio.wait_for(stub.client_hung_up.wait(), timeout=10)


def test_keys_come_from_the_argument_or_the_sdks_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(MissingApiKeyError) as raised:
        GeminiAdapter()
    assert raised.value.variable == "GEMINI_API_KEY"
    GeminiAdapter(base_url="http://127.0.0.1:1")  # a local server needs none
    monkeypatch.setenv("GEMINI_API_KEY", "from-gemini")
    GeminiAdapter()
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google")
    GeminiAdapter()


async def test_the_key_reaches_the_wire(stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google")
    monkeypatch.setenv("GEMINI_API_KEY", "from-gemini")
    stub.script(sse_reply(gemini_text_reply("a")), sse_reply(gemini_text_reply("b")))

    await collect(GeminiAdapter(base_url=stub.url).stream(request(question())))
    monkeypatch.delenv("GOOGLE_API_KEY")
    await collect(GeminiAdapter(base_url=stub.url).stream(request(question())))

    keys = [r.headers["x-goog-api-key"] for r in stub.requests]
    assert keys == ["from-google", "from-gemini"]  # the SDK's precedence


async def test_a_stalled_server_is_not_retried_behind_dshs_back(stub: StubServer) -> None:
    stub.script(Reply(stall=True))

    # 2 s: long enough that the request reaches the stub before the timeout on a loaded machine
    reported = failure_of(
        await collect(adapter(stub, first_chunk_timeout=2.0).stream(request(question())))
    )

    assert reported.code == "TIMEOUT"
    assert len(stub.requests) == 1


def test_a_thinking_config_the_sdk_does_not_know_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match="not a Gemini thinking config"):
        GeminiAdapter(base_url="http://127.0.0.1:1", thinking={"budget": 1024})


async def test_image_data_that_is_not_base64_is_refused_naming_the_message(
    stub: StubServer,
) -> None:
    picture = create_user_message(
        content=[{"type": "image", "media_type": "image/png", "data": "not base64!"}]
    )

    reported = failure_of(await collect(adapter(stub).stream(request(picture))))

    assert reported.code == "INVALID_REQUEST"
    assert picture.id in reported.message and "not base64" in reported.message
    assert stub.requests == []


async def test_images_travel_inline_or_by_uri(stub: StubServer) -> None:
    stub.script(sse_reply(gemini_text_reply("a cat")))
    pictures = create_user_message(
        content=[
            {"type": "text", "text": "What are these?"},
            {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="},
            {"type": "image", "media_type": "image/jpeg", "url": "https://example.com/c.jpg"},
        ]
    )

    await collect(adapter(stub).stream(request(pictures)))

    # Proto field names inside the blobs, as the SDK writes them (see above).
    assert stub.bodies[0]["contents"][0]["parts"] == [
        {"text": "What are these?"},
        {"inlineData": {"mime_type": "image/png", "data": "iVBORw0KGgo="}},
        {"fileData": {"file_uri": "https://example.com/c.jpg", "mime_type": "image/jpeg"}},
    ]
