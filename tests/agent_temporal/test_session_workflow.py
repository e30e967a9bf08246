"""The ready workflow per session: input by signal-with-start, approvals by signal,
status by query, continue-as-new after N turns, and every payload bounded."""

from __future__ import annotations

import uuid

from temporalio.api.enums.v1 import EventType

from agent_temporal.checks import (
    PAYLOAD_BOUND,
    assistant_texts,
    awaiting_approval,
    conversation,
    history_payload_sizes,
    idle_after,
    status_until,
)
from agent_temporal.conftest import Rig
from agent_temporal.scenario import count
from dsh_agent.temporal import Denial, SessionWorkflow
from dsh_llm import CallId


async def test_a_call_waiting_for_approval_survives_a_killed_worker_and_runs_once(rig: Rig) -> None:
    session_id = str(uuid.uuid4())
    first = rig.worker_process()
    handle = await rig.agent().send(
        rig.client, session_id, 'call guarded {"n": 1}', task_queue=rig.task_queue
    )
    waiting = await status_until(handle, awaiting_approval)
    first.kill()
    second = rig.worker_process()
    try:
        await handle.signal(SessionWorkflow.approve, CallId(waiting.awaiting_approval[0]))
        status = await status_until(handle, idle_after(1))
    finally:
        second.kill()

    assert waiting.awaiting_approval == ("call-1",)
    assert status.awaiting_approval == ()
    assert count(rig.effects, "guarded") == 1
    session = await rig.session(session_id)
    assert assistant_texts(session) == ["", "Tool said: guarded ran 1 time(s)"]
    await rig.assert_log_rebuilds_the_wire_requests(session)


async def test_a_denied_call_never_runs_and_the_model_hears_the_reason(rig: Rig) -> None:
    session_id = str(uuid.uuid4())
    async with rig.worker():
        handle = await rig.agent().send(
            rig.client, session_id, 'call guarded {"n": 1}', task_queue=rig.task_queue
        )
        waiting = await status_until(handle, awaiting_approval)
        await handle.signal(
            SessionWorkflow.deny, Denial(CallId(waiting.awaiting_approval[0]), "not today")
        )
        await status_until(handle, idle_after(1))

    assert count(rig.effects, "guarded") == 0
    session = await rig.session(session_id)
    assert "not today" in assistant_texts(session)[-1]


async def test_the_workflow_continues_as_new_after_n_turns_with_the_conversation_intact(
    rig: Rig,
) -> None:
    session_id = str(uuid.uuid4())
    agent = rig.agent()
    prompts = [f"message {n}" for n in range(1, 6)]
    async with rig.worker():
        for number, prompt in enumerate(prompts, start=1):
            handle = await agent.send(
                rig.client, session_id, prompt, task_queue=rig.task_queue, continue_after_turns=2
            )
            status = await status_until(handle, idle_after(number))
        runs = [
            run
            async for run in rig.client.list_workflows(f"WorkflowId = 'dsh-session-{session_id}'")
        ]

    assert status.turns == 5
    assert len(runs) == 3  # continued as new after turns 2 and 4
    for run in runs:
        history = await rig.client.get_workflow_handle(run.id, run_id=run.run_id).fetch_history()
        last = history.events[-1].event_type
        if run.run_id != runs[0].run_id or last != EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            assert last in (
                EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
                EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
            )
    session = await rig.session(session_id)
    expected = []
    for prompt in prompts:
        expected += [("UserMessage", prompt), ("AssistantMessage", f"You said: {prompt}")]
    assert conversation(session) == expected
    await rig.assert_log_rebuilds_the_wire_requests(session)


async def test_every_payload_stays_under_4_kb_however_long_the_conversation(rig: Rig) -> None:
    session_id = str(uuid.uuid4())
    agent = rig.agent()
    turns = 40
    async with rig.worker():
        for number in range(1, turns + 1):
            text = f"turn {number} " + "x" * 1000 if number % 4 else f'call bump {{"n": {number}}}'
            handle = await agent.send(
                rig.client, session_id, text, task_queue=rig.task_queue, continue_after_turns=1000
            )
            status = await status_until(handle, idle_after(number))
        description = await handle.describe()
        sizes = await history_payload_sizes(rig.client, handle.id, description.run_id)
        query_size = sum(p.ByteSize() for p in await rig.client.data_converter.encode([status]))

    session = await rig.session(session_id)
    transcript = sum(len(text) for _, text in conversation(session))
    assert transcript > 10 * PAYLOAD_BOUND  # the conversation is far larger than the bound
    assert len(sizes) > 4 * turns
    assert max(sizes) < PAYLOAD_BOUND
    assert query_size < PAYLOAD_BOUND
