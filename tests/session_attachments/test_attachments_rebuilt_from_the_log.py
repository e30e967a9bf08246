"""An agent run whose prompt and tool result hold attachments: the requests rebuilt
from the log alone, sent with the same store, put the very same bodies on the wire."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest
from providers.frames import (
    responses_call,
    responses_completed,
    responses_created,
    responses_item_added,
    responses_item_done,
    responses_text_reply,
    responses_usage,
)
from providers.gemini_frames import gemini_chunk, gemini_text_reply, gemini_usage
from providers.http_stub import Reply, StubServer, sse_reply
from providers.test_agent_with_real_providers import assert_log_rebuilds_the_wire_requests

from dsh_agent import AgentLoop, run, tool
from dsh_llm import ContentBlock, ImageBlock, ModelAdapter, TextBlock, reading_attachments
from dsh_llm.providers import GeminiAdapter, OpenAIResponsesAdapter
from dsh_session import Attachment, Session, create_user_message_with_attachments
from dsh_session.stores import SqliteSessionStore

from .images import png

PROMPT_IMAGE = png(8, 8, noise=True)
SCREEN = png(16, 9, noise=True)
PDF = b"%PDF-1.4\n%%EOF\n"


def responses_turns(stub: StubServer) -> tuple[ModelAdapter, list[Reply]]:
    call = responses_call("call_s", "screenshot", "{}")
    calling = sse_reply(
        [
            responses_created(),
            responses_item_added(0, {**call, "arguments": "", "status": "in_progress"}),
            responses_item_done(0, call),
            responses_completed(responses_usage(30, 5)),
        ]
    )
    adapter = OpenAIResponsesAdapter(
        base_url=f"{stub.url}/v1", api_key="k", max_retries=0, encrypted_reasoning=False
    )
    return adapter, [calling, sse_reply(responses_text_reply("A chart."))]


def gemini_turns(stub: StubServer) -> tuple[ModelAdapter, list[Reply]]:
    calling = sse_reply(
        [
            gemini_chunk(
                {"functionCall": {"id": "call_s", "name": "screenshot", "args": {}}},
                finish_reason="STOP",
                usage=gemini_usage(30, 5),
            )
        ]
    )
    adapter = GeminiAdapter(base_url=stub.url, api_key="k")
    return adapter, [calling, sse_reply(gemini_text_reply("A chart."))]


@pytest.mark.parametrize(
    ("turns", "provider", "model"),
    [(responses_turns, "openai", "gpt-test"), (gemini_turns, "gemini", "gemini-test")],
    ids=["responses", "gemini"],
)
async def test_requests_with_attachments_are_rebuilt_from_the_log(
    stub: StubServer,
    tmp_path: Path,
    turns: Callable[[StubServer], tuple[ModelAdapter, list[Reply]]],
    provider: str,
    model: str,
) -> None:
    adapter, replies = turns(stub)
    stub.script(*replies)
    async with SqliteSessionStore(tmp_path / "s.db") as store:
        shot = await store.save_attachment(SCREEN, media_type="image/png", name="screen.png")

        @tool
        async def screenshot() -> list[ContentBlock]:
            """A screenshot of the screen."""
            return [TextBlock(text="Taken."), ImageBlock(attachment=shot)]

        agent = AgentLoop(
            session=Session.create(),
            adapter=adapter,
            provider=provider,
            model=model,
            tools=[screenshot],
            store=store,
            check_requests=True,
        )
        message = await create_user_message_with_attachments(
            store,
            "What is on the screen?",
            attachments=[
                Attachment(PROMPT_IMAGE, "image/png", "chart.png"),
                Attachment(PDF, "application/pdf", "report.pdf"),
            ],
        )
        result = await run(agent, message)
        assert result.final_response == "A chart."
        sent = str(stub.bodies[1])
        encode = base64.urlsafe_b64encode if provider == "gemini" else base64.b64encode
        for data in (PROMPT_IMAGE, SCREEN, PDF):
            assert encode(data).decode() in sent
        with reading_attachments(store):
            await assert_log_rebuilds_the_wire_requests(agent, adapter, stub)
