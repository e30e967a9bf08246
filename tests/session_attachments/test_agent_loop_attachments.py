"""An agent loop with a store sends a prompt's attachments to the model from the store,
while its log holds only their references."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from providers.frames import CHAT_DONE, chat_chunk
from providers.http_stub import StubServer, sse_reply

from dsh_agent import AgentLoop, run
from dsh_llm.providers import OpenAIChatAdapter
from dsh_session import Attachment, Session, create_user_message_with_attachments
from dsh_session.stores import SqliteSessionStore

from .images import png


async def test_the_loop_sends_stored_bytes_and_logs_only_the_reference(
    stub: StubServer, tmp_path: Path
) -> None:
    image = png(64, 64, noise=True)
    stub.script(sse_reply([chat_chunk({"content": "A square."}, finish_reason="stop"), CHAT_DONE]))
    adapter = OpenAIChatAdapter(base_url=f"{stub.url}/v1", api_key="k", provider="deepseek")
    async with SqliteSessionStore(tmp_path / "s.db") as store:
        session = Session.create()
        agent = AgentLoop(
            session=session, adapter=adapter, provider="deepseek", model="m", store=store
        )
        message = await create_user_message_with_attachments(
            store, "What shape?", attachments=[Attachment(image, "image/png", "sq.png")]
        )
        result = await run(agent, message)
        assert result.final_response == "A square."
        events = [event.model_dump(mode="json") for event in session.events]
    sent = stub.bodies[0]["messages"][-1]["content"][1]["image_url"]["url"]
    assert sent == "data:image/png;base64," + base64.b64encode(image).decode()
    logged = json.dumps(events)
    assert base64.b64encode(image).decode()[:100] not in logged
    assert message.content[1].attachment.attachment_id in logged  # type: ignore[union-attr]
