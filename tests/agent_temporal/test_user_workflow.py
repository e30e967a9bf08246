"""A dsh agent inside a user's own workflow, on the real dev server: each model step
and each tool call is an activity, and the log in the store is the conversation."""

from __future__ import annotations

import asyncio
import uuid

from agent_temporal.checks import assistant_texts, exists, wait_until
from agent_temporal.conftest import Rig
from agent_temporal.scenario import (
    Conversation,
    ConversationInput,
    SteerableConversation,
    count,
)
from dsh_llm import ToolResultMessage


async def test_a_tool_using_conversation_runs_in_a_user_workflow(any_store_rig: Rig) -> None:
    rig = any_store_rig
    session_id = str(uuid.uuid4())
    given = ConversationInput(
        rig.store_url, session_id, ('call bump {"name": "a"}', "hello", 'call bump {"name": "b"}')
    )
    async with rig.worker():
        outcomes = await rig.client.execute_workflow(
            Conversation.run, given, id=f"conv-{session_id}", task_queue=rig.task_queue
        )

    assert [(o.turn, o.reason) for o in outcomes] == [(n, "completed") for n in (1, 2, 3)]
    assert count(rig.effects, "bump") == 2
    session = await rig.session(session_id)
    assert assistant_texts(session) == [
        "",
        "Tool said: bumped to 1",
        "You said: hello",
        "",
        "Tool said: bumped to 2",
    ]
    results = [m for m in session.derive_messages() if isinstance(m, ToolResultMessage)]
    assert len(results) == 2
    assert len(rig.model.requests) == 5


async def test_a_user_workflow_cancels_its_agents_turn_through_a_turn_control(rig: Rig) -> None:
    session_id = str(uuid.uuid4())
    given = ConversationInput(rig.store_url, session_id, ('call bump {"n": 1}', "and now?"))
    (rig.effects / "hold").touch()
    async with rig.worker():
        handle = await rig.client.start_workflow(
            SteerableConversation.run,
            given,
            id=f"steerable-{uuid.uuid4()}",
            task_queue=rig.task_queue,
        )
        await wait_until(exists(rig.effects / "holding"), "the tool holds")
        await handle.signal(SteerableConversation.cancel)
        while not await handle.query(SteerableConversation.cancelling):
            await asyncio.sleep(0.05)  # the workflow has the signal before the tool ends
        (rig.effects / "hold").unlink()
        outcomes = await handle.result()

    assert [outcome.reason for outcome in outcomes] == ["aborted", "completed"]
    assert count(rig.effects, "bump") == 1
    await rig.assert_log_rebuilds_the_wire_requests(await rig.session(session_id))
