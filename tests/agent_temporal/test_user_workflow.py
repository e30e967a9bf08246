"""A dsh agent inside a user's own workflow, on the real dev server: each model step
and each tool call is an activity, and the log in the store is the conversation."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from cli.openai_server import FakeOpenAIServer
from temporalio.client import Client

from agent_temporal.checks import (
    assert_log_rebuilds_the_wire_requests,
    exists,
    stored_session,
    wait_until,
)
from agent_temporal.conftest import running_worker
from agent_temporal.scenario import (
    Conversation,
    ConversationInput,
    SteerableConversation,
    count,
)
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


async def test_a_user_workflow_cancels_its_agents_turn_through_a_turn_control(
    client: Client,
    task_queue: str,
    model_server: FakeOpenAIServer,
    side_effects: Path,
    store_url: str,
) -> None:
    session_id = str(uuid.uuid4())
    given = ConversationInput(store_url, session_id, ('call bump {"n": 1}', "and now?"))
    (side_effects / "hold").touch()
    async with running_worker(client, task_queue, model_server, side_effects):
        handle = await client.start_workflow(
            SteerableConversation.run, given, id=f"steerable-{uuid.uuid4()}", task_queue=task_queue
        )
        await wait_until(exists(side_effects / "holding"), "the tool holds")
        await handle.signal(SteerableConversation.cancel)
        while not await handle.query(SteerableConversation.cancelling):
            await asyncio.sleep(0.05)  # the workflow has the signal before the tool ends
        (side_effects / "hold").unlink()
        outcomes = await handle.result()

    assert [outcome.reason for outcome in outcomes] == ["aborted", "completed"]
    assert count(side_effects, "bump") == 1
    session = await stored_session(store_url, session_id)
    await assert_log_rebuilds_the_wire_requests(
        session, model_server, list(model_server.raw_requests)
    )
