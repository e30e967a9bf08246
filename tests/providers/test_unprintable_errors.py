"""Issue 34's rule in the provider adapters: reporting a failure cannot fail.

A client of the caller's own (``client=``) may raise anything, including an
exception whose ``str()`` itself raises; the call still ends in one
``finish {error}`` that describes it, instead of the formatting error escaping
``stream()``. Before, the classifier formatted such exceptions with ``str()``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

import pytest
from google.genai.types import GenerateContentResponse

from dsh_llm import ErrorFinish, FinishChunk, GenerateRequest, LlmFailure, create_user_message
from dsh_llm.providers import (
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
)


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no words")


class BrokenStream:
    """An SDK stream whose first read raises (after ``first``, if given)."""

    def __init__(self, first: Any = None) -> None:
        self._first = first

    def __aiter__(self) -> AsyncIterator[Any]:
        return self

    async def __anext__(self) -> Any:
        first, self._first = self._first, None
        if first is not None:
            return first
        raise Unprintable

    async def close(self) -> None:
        pass


def client_raising(*, while_streaming: bool) -> Any:
    async def create(**_: Any) -> BrokenStream:
        if while_streaming:
            return BrokenStream()
        raise Unprintable

    async def generate_content_stream(**_: Any) -> BrokenStream:
        # google-genai sends the request when its stream is first read: a read that
        # fails at once fails the opening, and "while streaming" is after a chunk.
        if while_streaming:
            return BrokenStream(first=GenerateContentResponse())
        return BrokenStream()

    endpoint = SimpleNamespace(create=create)
    models = SimpleNamespace(generate_content_stream=generate_content_stream)
    gemini = SimpleNamespace(models=models)
    return SimpleNamespace(
        chat=SimpleNamespace(completions=endpoint),
        messages=endpoint,
        responses=endpoint,
        aio=gemini,
    )


ADAPTERS: dict[str, Callable[[Any], Any]] = {
    "openai": lambda client: OpenAIChatAdapter(client=client),
    "anthropic": lambda client: AnthropicAdapter(client=client),
    "responses": lambda client: OpenAIResponsesAdapter(client=client),
    "gemini": lambda client: GeminiAdapter(client=client),
}


async def failure(adapter: Any) -> LlmFailure:
    request = GenerateRequest(provider="p", model="m", messages=(create_user_message("hi"),))
    chunks = [item async for item in adapter.stream(request)]
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and isinstance(last.reason, ErrorFinish)
    return last.reason.failure


@pytest.mark.parametrize("adapter", list(ADAPTERS))
async def test_an_unprintable_exception_opening_the_call_is_described(adapter: str) -> None:
    reported = await failure(ADAPTERS[adapter](client_raising(while_streaming=False)))

    assert reported.code == "UNKNOWN"
    assert reported.message == (
        "the model call to <unknown URL> failed: Unprintable (its str() raised RuntimeError)"
    )


@pytest.mark.parametrize("adapter", list(ADAPTERS))
async def test_an_unprintable_exception_reading_the_stream_is_described(adapter: str) -> None:
    reported = await failure(ADAPTERS[adapter](client_raising(while_streaming=True)))

    assert reported.code == "TRANSPORT"
    assert reported.message == (
        "the stream from <unknown URL> broke off before the model finished: "
        "Unprintable (its str() raised RuntimeError)"
    )
