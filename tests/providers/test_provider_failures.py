"""Failures every adapter reports the same way: HTTP errors become stable codes with
the provider's retry facts, and a silent or stalling server ends the call in time.
Each test runs against both adapters through their official clients."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from dsh_llm import (
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    LlmFailure,
    ModelAdapter,
    create_user_message,
)
from dsh_llm.providers import (
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    adapter_for,
)
from providers.frames import chat_chunk, message_start, responses_created
from providers.gemini_frames import gemini_chunk
from providers.http_stub import Reply, StubServer, json_reply, sse_reply

AdapterFactory = Callable[..., ModelAdapter]


def openai_adapter(stub: StubServer, **options: Any) -> ModelAdapter:
    return OpenAIChatAdapter(base_url=f"{stub.url}/v1", api_key="k", max_retries=0, **options)


def anthropic_adapter(stub: StubServer, **options: Any) -> ModelAdapter:
    return AnthropicAdapter(base_url=stub.url, api_key="k", max_retries=0, **options)


def responses_adapter(stub: StubServer, **options: Any) -> ModelAdapter:
    return OpenAIResponsesAdapter(base_url=f"{stub.url}/v1", api_key="k", max_retries=0, **options)


def gemini_adapter(stub: StubServer, **options: Any) -> ModelAdapter:
    return GeminiAdapter(base_url=stub.url, api_key="k", max_retries=0, **options)


def ollama_adapter(stub: StubServer, **options: Any) -> ModelAdapter:
    return adapter_for("ollama:m", base_url=f"{stub.url}/v1", max_retries=0, **options)


PATH = {
    openai_adapter: "/v1/chat/completions",
    anthropic_adapter: "/v1/messages",
    responses_adapter: "/v1/responses",
    gemini_adapter: "/v1beta/models/m:streamGenerateContent",
    ollama_adapter: "/v1/chat/completions",
}
FIRST_FRAME = {
    openai_adapter: chat_chunk({"content": "Hel"}),
    anthropic_adapter: message_start(),
    responses_adapter: responses_created(),
    gemini_adapter: gemini_chunk({"text": "Hel"}),
    ollama_adapter: chat_chunk({"content": "Hel"}),
}
BROKEN_FRAME = b"event: content_block_delta\ndata: {not json\n\n"


@pytest.fixture(
    params=[openai_adapter, anthropic_adapter, responses_adapter, gemini_adapter, ollama_adapter],
    ids=["openai", "anthropic", "responses", "gemini", "ollama"],
)
def make_adapter(request: pytest.FixtureRequest) -> AdapterFactory:
    factory: AdapterFactory = request.param
    return factory


async def failure(adapter: ModelAdapter) -> LlmFailure:
    question = create_user_message(content="hi", source={"kind": "user"})
    request = GenerateRequest(provider="p", model="m", messages=(question,))
    chunks = [item async for item in adapter.stream(request)]
    last = chunks[-1]
    assert isinstance(last, FinishChunk)
    assert isinstance(last.reason, ErrorFinish)
    return last.reason.failure


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "INVALID_REQUEST"),
        (401, "AUTH"),
        (403, "AUTH"),
        (404, "HTTP_404"),
        (422, "HTTP_422"),
        (503, "SERVER"),
    ],
)
async def test_http_status_maps_to_a_stable_code(
    stub: StubServer, make_adapter: AdapterFactory, status: int, code: str
) -> None:
    stub.script(json_reply(status, {"error": {"message": "no", "type": "some_error"}}))

    reported = await failure(make_adapter(stub))

    assert (reported.code, reported.status) == (code, status)


@pytest.mark.parametrize(
    ("status", "error", "code"),
    [
        (
            429,
            {"message": "You exceeded your current quota", "type": "insufficient_quota"},
            "QUOTA",
        ),
        (402, {"message": "Insufficient Balance", "type": "unknown_error"}, "QUOTA"),
        (429, {"message": "slow down", "type": "rate_limit_error"}, "RATE_LIMIT"),
        (
            400,
            {"message": "This model's maximum context length is 65536 tokens", "type": "x"},
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        (
            400,
            {"message": "bad field", "code": "context_length_exceeded"},
            "CONTEXT_WINDOW_EXCEEDED",
        ),
        (
            413,
            {"message": "prompt is too long for the model context", "type": "x"},
            "INVALID_REQUEST",
        ),
        (529, {"message": "Overloaded", "type": "overloaded_error"}, "SERVER"),
    ],
)
async def test_the_provider_wording_picks_the_harness_code(
    stub: StubServer, make_adapter: AdapterFactory, status: int, error: object, code: str
) -> None:
    """Quota before rate limit, context overflow apart from other bad requests, as the
    harness's adapter classifies them."""
    stub.script(json_reply(status, {"error": error}))

    reported = await failure(make_adapter(stub))

    assert (reported.code, reported.status) == (code, status)


async def test_retry_after_given_as_an_http_date(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    moment = datetime.now(UTC) + timedelta(seconds=30)
    stub.script(
        json_reply(
            429,
            {"error": {"message": "later", "type": "rate_limit_error"}},
            headers={"retry-after": format_datetime(moment, usegmt=True)},
        )
    )

    reported = await failure(make_adapter(stub))

    assert reported.code == "RATE_LIMIT"
    assert reported.provider_retry_after_ms is not None
    assert 25_000 < reported.provider_retry_after_ms <= 31_000


async def test_no_answer_within_the_timeout_is_a_timeout(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(Reply(stall=True))

    reported = await failure(make_adapter(stub, timeout=0.3))

    assert (reported.code, reported.status) == ("TIMEOUT", None)


async def test_a_stream_stalling_past_the_read_timeout_is_interrupted(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(sse_reply([FIRST_FRAME[make_adapter]], then="hold"))

    reported = await failure(make_adapter(stub, timeout=0.3))

    assert reported.code == "TRANSPORT"
    assert f"the stream from {stub.url}{PATH[make_adapter]} broke off" in reported.message
    assert "read timeout" in reported.message


async def test_a_payload_that_is_not_json_is_a_malformed_response(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(sse_reply([FIRST_FRAME[make_adapter], BROKEN_FRAME]))

    reported = await failure(make_adapter(stub))

    assert reported.code == "MALFORMED_RESPONSE"


@pytest.mark.parametrize("first_frames", [0, 1], ids=["before any data", "after data"])
async def test_a_stream_sending_only_keepalive_comments_times_out(
    stub: StubServer, make_adapter: AdapterFactory, first_frames: int
) -> None:
    frames = [FIRST_FRAME[make_adapter]][:first_frames]
    stub.script(sse_reply(frames, then="hold", keepalive_every=0.05))

    reported = await failure(make_adapter(stub, idle_timeout=0.3))

    assert (reported.code, reported.status) == ("TIMEOUT", None)
    assert "no data" in reported.message
    await asyncio.wait_for(stub.client_hung_up.wait(), timeout=10)


async def test_a_stream_sending_nothing_after_its_headers_times_out(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(sse_reply([], then="hold"))

    reported = await failure(make_adapter(stub, idle_timeout=0.3))

    assert reported.code == "TIMEOUT"


@pytest.mark.parametrize("idle_timeout", [0, -1.0])
def test_an_idle_timeout_that_is_not_positive_is_refused(
    stub: StubServer, make_adapter: AdapterFactory, idle_timeout: float
) -> None:
    with pytest.raises(ValueError, match="idle_timeout"):
        make_adapter(stub, idle_timeout=idle_timeout)


async def test_a_server_that_never_answers_times_out_at_the_first_chunk_timeout(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(Reply(stall=True))  # not even a status line

    reported = await failure(make_adapter(stub, first_chunk_timeout=0.3, idle_timeout=None))

    assert (reported.code, reported.status) == ("TIMEOUT", None)
    assert reported.message == (
        f"first-chunk timeout: the provider at {stub.url}{PATH[make_adapter]} sent no "
        "response within 0.3 s of the request (first_chunk_timeout)"
    )
    await asyncio.wait_for(stub.client_hung_up.wait(), timeout=10)


async def test_keepalives_after_the_headers_are_not_a_first_chunk(
    stub: StubServer, make_adapter: AdapterFactory
) -> None:
    stub.script(sse_reply([], then="hold", keepalive_every=0.05))

    reported = await failure(make_adapter(stub, first_chunk_timeout=0.3, idle_timeout=None))

    assert reported.code == "TIMEOUT"
    assert "no response within 0.3 s" in reported.message


@pytest.mark.parametrize("first_chunk_timeout", [0, -1.0])
def test_a_first_chunk_timeout_that_is_not_positive_is_refused(
    stub: StubServer, make_adapter: AdapterFactory, first_chunk_timeout: float
) -> None:
    with pytest.raises(ValueError, match="first_chunk_timeout"):
        make_adapter(stub, first_chunk_timeout=first_chunk_timeout)
