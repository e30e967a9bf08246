"""Adapters read an attachment's bytes from the store in effect and send them in the
provider's own form; what a wire cannot carry is a typed failure naming the message."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from providers.frames import CHAT_DONE, chat_chunk, responses_text_reply, text_reply
from providers.gemini_frames import gemini_text_reply
from providers.http_stub import StubServer, sse_reply

from dsh_llm import (
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    LlmFailure,
    Message,
    ModelAdapter,
    StreamChunk,
    ToolCallBlock,
    create_assistant_message,
    create_tool_result_message,
    reading_attachments,
)
from dsh_llm.providers import (
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
)
from dsh_session import Attachment, AttachmentLimits, create_user_message_with_attachments
from dsh_session.stores import MemorySessionStore

from .images import gif, png

IMAGE = png(16, 9, noise=True)
PDF = b"%PDF-1.4\n%%EOF\n"
NOTES = b"line one\nline two\n"
GIF = gif(2, 2)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def gemini_b64(data: bytes) -> str:
    """Base64 as google-genai writes bytes: the URL-safe alphabet, which Google's
    JSON parser takes as it takes the standard one."""
    return base64.urlsafe_b64encode(data).decode()


def request(*messages: Message, provider: str = "deepseek") -> GenerateRequest:
    return GenerateRequest(provider=provider, model="m", messages=messages)


async def collect(chunks: AsyncIterator[StreamChunk]) -> list[StreamChunk]:
    return [item async for item in chunks]


def failure_of(chunks: list[StreamChunk]) -> LlmFailure:
    last = chunks[-1]
    assert isinstance(last, FinishChunk) and isinstance(last.reason, ErrorFinish)
    return last.reason.failure


def openai(stub: StubServer) -> OpenAIChatAdapter:
    return OpenAIChatAdapter(base_url=f"{stub.url}/v1", api_key="k", provider="deepseek")


def anthropic(stub: StubServer) -> AnthropicAdapter:
    return AnthropicAdapter(base_url=stub.url, api_key="k", max_retries=0)


def responses(stub: StubServer) -> OpenAIResponsesAdapter:
    return OpenAIResponsesAdapter(base_url=f"{stub.url}/v1", api_key="k", max_retries=0)


def gemini(stub: StubServer) -> GeminiAdapter:
    return GeminiAdapter(base_url=stub.url, api_key="k")


EVERY_ADAPTER: list[Callable[[StubServer], ModelAdapter]] = [openai, anthropic, responses, gemini]
every_adapter = pytest.mark.parametrize("adapter_for", EVERY_ADAPTER, ids=lambda f: f.__name__)


async def prompt(store: MemorySessionStore) -> Message:
    return await create_user_message_with_attachments(
        store,
        "Compare these.",
        attachments=[
            Attachment(IMAGE, "image/png", "chart.png"),
            Attachment(PDF, "application/pdf", "report.pdf"),
            Attachment(NOTES, "text/plain", "notes.txt"),
        ],
    )


async def test_openai_chat_gets_a_data_url_a_file_part_and_the_text(stub: StubServer) -> None:
    stub.script(sse_reply([chat_chunk({"content": "ok"}, finish_reason="stop"), CHAT_DONE]))
    store = MemorySessionStore()
    message = await prompt(store)
    with reading_attachments(store):
        await collect(openai(stub).stream(request(message)))
    assert stub.bodies[0]["messages"][0]["content"] == [
        {"type": "text", "text": "Compare these."},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64(IMAGE)}"}},
        {
            "type": "file",
            "file": {
                "filename": "report.pdf",
                "file_data": f"data:application/pdf;base64,{b64(PDF)}",
            },
        },
        {"type": "text", "text": "notes.txt:\nline one\nline two\n"},
    ]


async def test_anthropic_gets_base64_image_and_document_blocks(stub: StubServer) -> None:
    stub.script(sse_reply(text_reply("ok")), sse_reply(text_reply("ok")))
    store = MemorySessionStore()
    message = await prompt(store)
    with reading_attachments(store):
        await collect(anthropic(stub).stream(request(message, provider="anthropic")))
    content: list[dict[str, Any]] = stub.bodies[0]["messages"][0]["content"]
    assert content[1:] == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": b64(IMAGE)},
        },
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": b64(PDF)},
            "title": "report.pdf",
        },
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": NOTES.decode()},
            "title": "notes.txt",
        },
    ]


async def test_openai_responses_gets_an_input_image_an_input_file_and_the_text(
    stub: StubServer,
) -> None:
    stub.script(sse_reply(responses_text_reply("ok")))
    store = MemorySessionStore()
    message = await prompt(store)
    with reading_attachments(store):
        await collect(responses(stub).stream(request(message, provider="openai")))
    assert stub.bodies[0]["input"][0]["content"] == [
        {"type": "input_text", "text": "Compare these."},
        {
            "type": "input_image",
            "image_url": f"data:image/png;base64,{b64(IMAGE)}",
            "detail": "auto",
        },
        {
            "type": "input_file",
            "filename": "report.pdf",
            "file_data": f"data:application/pdf;base64,{b64(PDF)}",
        },
        {"type": "input_text", "text": "notes.txt:\nline one\nline two\n"},
    ]


async def test_gemini_gets_inline_data_for_the_image_the_pdf_and_the_text(
    stub: StubServer,
) -> None:
    """The SDK writes the blob's fields in their proto names (``mime_type``), which
    Google's JSON parser takes as it takes ``mimeType``."""
    stub.script(sse_reply(gemini_text_reply("ok")))
    store = MemorySessionStore()
    message = await prompt(store)
    with reading_attachments(store):
        await collect(gemini(stub).stream(request(message, provider="gemini")))
    assert stub.bodies[0]["contents"][0]["parts"] == [
        {"text": "Compare these."},
        {"inlineData": {"mime_type": "image/png", "data": gemini_b64(IMAGE)}},
        {"inlineData": {"mime_type": "application/pdf", "data": gemini_b64(PDF)}},
        {"inlineData": {"mime_type": "text/plain", "data": gemini_b64(NOTES)}},
    ]


async def test_anthropic_sends_an_image_a_tool_returned(stub: StubServer) -> None:
    stub.script(sse_reply(text_reply("ok")))
    store = MemorySessionStore()
    shot = await store.save_attachment(IMAGE, media_type="image/png", name="screen.png")
    result = create_tool_result_message(
        call_id="toolu_1", content=[{"type": "image", "attachment": shot.model_dump(mode="json")}]
    )
    with reading_attachments(store):
        await collect(anthropic(stub).stream(request(result, provider="anthropic")))
    (block,) = stub.bodies[0]["messages"][0]["content"]
    assert block["content"] == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": b64(IMAGE)},
        }
    ]


@every_adapter
async def tool_returned(store: MemorySessionStore) -> tuple[Message, Message]:
    """A call to ``screenshot`` and its result: a note, an image and a PDF."""
    shot = await store.save_attachment(IMAGE, media_type="image/png", name="screen.png")
    report = await store.save_attachment(PDF, media_type="application/pdf", name="report.pdf")
    call = ToolCallBlock(call_id="call_1", name="screenshot", arguments="{}")
    answer = create_assistant_message(content=[call], source={"provider": "x", "model": "y"})
    result = create_tool_result_message(
        call_id="call_1",
        content=[
            {"type": "text", "text": "Taken."},
            {"type": "image", "attachment": shot.model_dump(mode="json")},
            {"type": "file", "attachment": report.model_dump(mode="json")},
        ],
    )
    return answer, result


async def test_openai_responses_sends_what_a_tool_returned_as_input_parts(
    stub: StubServer,
) -> None:
    stub.script(sse_reply(responses_text_reply("ok")))
    store = MemorySessionStore()
    answer, result = await tool_returned(store)
    with reading_attachments(store):
        await collect(responses(stub).stream(request(answer, result, provider="openai")))
    assert stub.bodies[0]["input"][1] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": [
            {"type": "input_text", "text": "Taken."},
            {
                "type": "input_image",
                "image_url": f"data:image/png;base64,{b64(IMAGE)}",
                "detail": "auto",
            },
            {
                "type": "input_file",
                "filename": "report.pdf",
                "file_data": f"data:application/pdf;base64,{b64(PDF)}",
            },
        ],
    }


async def test_gemini_sends_what_a_tool_returned_as_function_response_parts(
    stub: StubServer,
) -> None:
    stub.script(sse_reply(gemini_text_reply("ok")))
    store = MemorySessionStore()
    answer, result = await tool_returned(store)
    with reading_attachments(store):
        await collect(gemini(stub).stream(request(answer, result, provider="gemini")))
    assert stub.bodies[0]["contents"][1]["parts"] == [
        {
            "functionResponse": {
                "id": "call_1",
                "name": "screenshot",
                "response": {"output": "Taken."},
                "parts": [
                    {"inline_data": {"mime_type": "image/png", "data": gemini_b64(IMAGE)}},
                    {"inline_data": {"mime_type": "application/pdf", "data": gemini_b64(PDF)}},
                ],
            }
        }
    ]


@every_adapter
async def test_a_media_type_the_wire_cannot_carry_fails_naming_message_and_type(
    stub: StubServer, adapter_for: Callable[[StubServer], ModelAdapter]
) -> None:
    store = MemorySessionStore()
    store.attachment_limits = AttachmentLimits(media_types=frozenset({"application/zip"}))
    message = await create_user_message_with_attachments(
        store, attachments=[Attachment(b"PK\x03\x04", "application/zip", "a.zip")]
    )
    with reading_attachments(store):
        failure = failure_of(await collect(adapter_for(stub).stream(request(message))))
    assert failure.code == "UNSUPPORTED_CONTENT"
    assert message.id in failure.message and "'application/zip'" in failure.message
    assert stub.requests == []


async def test_gemini_refuses_a_gif_naming_message_and_type(stub: StubServer) -> None:
    store = MemorySessionStore()
    message = await create_user_message_with_attachments(
        store, attachments=[Attachment(GIF, "image/gif", "a.gif")]
    )
    with reading_attachments(store):
        failure = failure_of(await collect(gemini(stub).stream(request(message))))
    assert failure.code == "UNSUPPORTED_CONTENT"
    assert message.id in failure.message and "'image/gif'" in failure.message
    assert stub.requests == []


@every_adapter
async def test_without_a_reader_the_request_fails_before_it_is_sent(
    stub: StubServer, adapter_for: Callable[[StubServer], ModelAdapter]
) -> None:
    store = MemorySessionStore()
    message = await prompt(store)
    failure = failure_of(await collect(adapter_for(stub).stream(request(message))))
    assert failure.code == "ATTACHMENT_NOT_FOUND"
    assert message.id in failure.message and "reading_attachments" in failure.message
    assert stub.requests == []


@every_adapter
async def test_bytes_that_do_not_hash_to_the_reference_are_never_sent(
    stub: StubServer, adapter_for: Callable[[StubServer], ModelAdapter]
) -> None:
    store = MemorySessionStore()
    message = await prompt(store)
    image = message.content[1]
    store._blobs[image.attachment.sha256] = b"tampered"  # type: ignore[union-attr]
    with reading_attachments(store):
        failure = failure_of(await collect(adapter_for(stub).stream(request(message))))
    assert failure.code == "ATTACHMENT_CORRUPT"
    assert message.id in failure.message
    assert stub.requests == []
