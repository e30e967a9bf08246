"""Issue 34 (small): an OpenAI stream event whose ``data`` is not a JSON object (``[]``,
a number, a string) is a named wire error, ``MALFORMED_RESPONSE`` with a message
saying the event is not an object, not an ``AttributeError`` caught on the way out."""

from __future__ import annotations

import pytest

from dsh_llm import ErrorFinish, FinishChunk, GenerateRequest, create_user_message
from dsh_llm.providers import OpenAIChatAdapter, OpenAIResponsesAdapter
from providers.frames import CHAT_DONE
from providers.http_stub import StubServer, sse_frame, sse_reply


@pytest.mark.parametrize("adapter_class", [OpenAIChatAdapter, OpenAIResponsesAdapter])
@pytest.mark.parametrize("data", ["[]", "[1, 2]", "42", '"text"'])
async def test_an_event_whose_data_is_not_an_object_is_a_named_malformed_response(
    stub: StubServer, data: str, adapter_class: type[OpenAIChatAdapter | OpenAIResponsesAdapter]
) -> None:
    stub.script(sse_reply([sse_frame(data), CHAT_DONE]))
    adapter = adapter_class(base_url=f"{stub.url}/v1", api_key="k", max_retries=0)
    question = create_user_message(content="hi", source={"kind": "user"})
    request = GenerateRequest(provider="p", model="m", messages=(question,))

    chunks = [chunk async for chunk in adapter.stream(request)]

    [finish] = chunks
    assert isinstance(finish, FinishChunk) and isinstance(finish.reason, ErrorFinish)
    failure = finish.reason.failure
    assert failure.code == "MALFORMED_RESPONSE"
    assert "the stream event is" in failure.message and "not an object" in failure.message
    assert "AttributeError" not in failure.message
