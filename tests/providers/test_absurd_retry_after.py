"""Issue 34 #7: a 429 whose ``retry-after`` is absurd (huge, infinite, negative,
garbage) stays a ``RATE_LIMIT`` error finish. ``1e20`` seconds parsed to a delay past
the failure field's bound and ``adapter.stream()`` raised a raw pydantic
``ValidationError``; the README promises nothing but cancellation escapes ``stream``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from dsh_llm import (
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    ModelAdapter,
    StreamChunk,
    create_user_message,
)
from dsh_llm.providers import (
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
)
from providers.gemini_frames import gemini_error_body
from providers.http_stub import StubServer, json_reply

JSON_INT_MAX = 2**64 - 1
"""The bound of ``LlmFailure.provider_retry_after_ms`` (a JSON-safe integer)."""

Setup = tuple[ModelAdapter, GenerateRequest, object]


def openai(stub: StubServer) -> Setup:
    adapter = OpenAIChatAdapter(
        base_url=f"{stub.url}/v1", api_key="test-key", provider="deepseek", max_retries=0
    )
    body = {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}
    return adapter, request("deepseek", "deepseek-chat"), body


def anthropic(stub: StubServer) -> Setup:
    adapter = AnthropicAdapter(base_url=stub.url, api_key="test-key", max_retries=0)
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    return adapter, request("anthropic", "claude-test"), body


def responses(stub: StubServer) -> Setup:
    adapter = OpenAIResponsesAdapter(base_url=f"{stub.url}/v1", api_key="test-key", max_retries=0)
    body = {"error": {"message": "Rate limit reached", "type": "requests", "code": None}}
    return adapter, request("openai", "gpt-test"), body


def gemini(stub: StubServer) -> Setup:
    adapter = GeminiAdapter(base_url=stub.url, api_key="test-key", max_retries=0)
    body = gemini_error_body(429, "Resource has been exhausted.", "RESOURCE_EXHAUSTED")
    return adapter, request("gemini", "gemini-test"), body


def request(provider: str, model: str) -> GenerateRequest:
    hi = create_user_message(content="hi", source={"kind": "user"})
    return GenerateRequest(messages=(hi,), provider=provider, model=model)


async def collect(chunks: AsyncIterator[StreamChunk]) -> list[StreamChunk]:
    return [item async for item in chunks]


@pytest.mark.parametrize(
    "make",
    [openai, anthropic, responses, gemini],
    ids=["openai", "anthropic", "responses", "gemini"],
)
@pytest.mark.parametrize(
    ("header", "value", "expected"),
    [
        ("retry-after", "1e20", JSON_INT_MAX),
        ("retry-after-ms", "1e30", JSON_INT_MAX),
        ("retry-after", "18446744073709552", JSON_INT_MAX),
        ("retry-after", "inf", None),
        ("retry-after", "nan", None),
        ("retry-after", "-5", None),
        ("retry-after", "soon-ish", None),
        ("retry-after", "2", 2000),
    ],
)
async def test_an_absurd_retry_after_is_capped_and_the_429_stays_a_rate_limit(
    stub: StubServer,
    make: Callable[[StubServer], Setup],
    header: str,
    value: str,
    expected: int | None,
) -> None:
    adapter, req, body = make(stub)
    stub.script(json_reply(429, body, headers={header: value}))

    chunks = await collect(adapter.stream(req))

    assert len(chunks) == 1
    [finish] = chunks
    assert isinstance(finish, FinishChunk) and isinstance(finish.reason, ErrorFinish)
    failure = finish.reason.failure
    assert (failure.code, failure.status) == ("RATE_LIMIT", 429)
    assert failure.provider_retry_after_ms == expected
