"""A dsh agent inside a user's own workflow, on the real dev server: each model step
and each tool call is an activity, and the log in the store is the conversation."""

from __future__ import annotations

import uuid
from pathlib import Path

from cli.openai_server import FakeOpenAIServer
from temporalio.client import Client

from agent_temporal.checks import stored_session
from agent_temporal.conftest import running_worker
from agent_temporal.scenario import Conversation, ConversationInput, count
from dsh_llm import AssistantMessage, ToolResultMessage


async def test_a_tool_using_conversation_runs_in_a_user_workflow(
    client: Client,
    task_queue: str,
    model_server: FakeOpenAIServer,
    side_effects: Path,
    any_store_url: str,
) -> None:
    store_url = any_store_url
    session_id = str(uuid.uuid4())
    given = ConversationInput(
        store_url, session_id, ('call bump {"name": "a"}', "hello", 'call bump {"name": "b"}')
    )
    async with running_worker(client, task_queue, model_server, side_effects):
        outcomes = await client.execute_workflow(
            Conversation.run, given, id=f"conv-{session_id}", task_queue=task_queue
        )

    assert [(o.turn, o.reason) for o in outcomes] == [(n, "completed") for n in (1, 2, 3)]
    assert count(side_effects, "bump") == 2
    session = await stored_session(store_url, session_id)
    texts = [
        "".join(getattr(block, "text", "") for block in message.content)
        for message in session.derive_messages()
        if isinstance(message, AssistantMessage)
    ]
    assert texts == ["", "Tool said: bumped to 1", "You said: hello", "", "Tool said: bumped to 2"]
    results = [m for m in session.derive_messages() if isinstance(m, ToolResultMessage)]
    assert len(results) == 2
    assert len(model_server.requests) == 5
