"""The ready workflow per session: input by signal-with-start, approvals by signal,
status by query, continue-as-new after N turns, and every payload bounded."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from cli.openai_server import FakeOpenAIServer
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from agent_temporal.checks import (
    PAYLOAD_BOUND,
    assert_log_rebuilds_the_wire_requests,
    history_payload_sizes,
    stored_session,
)
from agent_temporal.conftest import WorkerProcess, running_worker
from agent_temporal.scenario import AGENT_NAME, count
from dsh_agent.temporal import SessionStatus, SessionWorkflow, TemporalAgent
from dsh_llm import AssistantMessage, CallId, UserMessage


def _agent(store_url: str) -> TemporalAgent:
    return TemporalAgent(AGENT_NAME, store_url=store_url, heartbeat=timedelta(seconds=5))


async def _status_until(
    handle: WorkflowHandle[SessionWorkflow, None],
    done: Callable[[SessionStatus], bool],
    timeout: float = 60,
) -> SessionStatus:
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while True:
        status: SessionStatus = await handle.query(SessionWorkflow.status)
        if done(status):
            return status
        if time.monotonic() > deadline:
            raise AssertionError(f"the session never got there: {status}")
        await asyncio.sleep(0.1)


def _idle_after(turns: int) -> Callable[[SessionStatus], bool]:
    return lambda status: status.state == "idle" and status.turns == turns


def _text(message: AssistantMessage | UserMessage) -> str:
    return "".join(getattr(block, "text", "") for block in message.content)


async def test_a_call_waiting_for_approval_survives_a_killed_worker_and_runs_once(
    client: Client,
    temporal_address: str,
    task_queue: str,
    model_server: FakeOpenAIServer,
    side_effects: Path,
    store_url: str,
) -> None:
    session_id = str(uuid.uuid4())
    first = WorkerProcess(temporal_address, task_queue, model_server.base_url, side_effects)
    handle = await _agent(store_url).send(
        client, session_id, 'call guarded {"n": 1}', task_queue=task_queue
    )
    waiting = await _status_until(handle, lambda s: s.state == "awaiting-approval")
    first.kill()
    second = WorkerProcess(temporal_address, task_queue, model_server.base_url, side_effects)
    try:
        await handle.signal(SessionWorkflow.approve, CallId(waiting.awaiting_approval[0]))
        status = await _status_until(handle, lambda s: s.state == "idle" and s.turns == 1)
    finally:
        second.kill()

    assert waiting.awaiting_approval == ("call-1",)
    assert status.awaiting_approval == ()
    assert count(side_effects, "guarded") == 1
    session = await stored_session(store_url, session_id)
    answers = [_text(m) for m in session.derive_messages() if isinstance(m, AssistantMessage)]
    assert answers == ["", "Tool said: guarded ran 1 time(s)"]
    await assert_log_rebuilds_the_wire_requests(
        session, model_server, list(model_server.raw_requests)
    )


async def test_a_denied_call_never_runs_and_the_model_hears_the_reason(
    client: Client,
    task_queue: str,
    model_server: FakeOpenAIServer,
    side_effects: Path,
    store_url: str,
) -> None:
    from dsh_agent.temporal import Denial

    session_id = str(uuid.uuid4())
    async with running_worker(client, task_queue, model_server, side_effects):
        handle = await _agent(store_url).send(
            client, session_id, 'call guarded {"n": 1}', task_queue=task_queue
        )
        waiting = await _status_until(handle, lambda s: s.state == "awaiting-approval")
        await handle.signal(
            SessionWorkflow.deny, Denial(CallId(waiting.awaiting_approval[0]), "not today")
        )
        await _status_until(handle, lambda s: s.state == "idle" and s.turns == 1)

    assert count(side_effects, "guarded") == 0
    session = await stored_session(store_url, session_id)
    answers = [_text(m) for m in session.derive_messages() if isinstance(m, AssistantMessage)]
    assert "not today" in answers[-1]


async def test_the_workflow_continues_as_new_after_n_turns_with_the_conversation_intact(
    client: Client,
    task_queue: str,
    model_server: FakeOpenAIServer,
    side_effects: Path,
    store_url: str,
) -> None:
    session_id = str(uuid.uuid4())
    agent = _agent(store_url)
    prompts = [f"message {n}" for n in range(1, 6)]
    async with running_worker(client, task_queue, model_server, side_effects):
        for number, prompt in enumerate(prompts, start=1):
            handle = await agent.send(
                client, session_id, prompt, task_queue=task_queue, continue_after_turns=2
            )
            status = await _status_until(handle, _idle_after(number))
        runs = [
            run async for run in client.list_workflows(f"WorkflowId = 'dsh-session-{session_id}'")
        ]

    assert status.turns == 5
    assert len(runs) == 3  # continued as new after turns 2 and 4
    for run in runs:
        history = await client.get_workflow_handle(run.id, run_id=run.run_id).fetch_history()
        last = history.events[-1].event_type
        if run.run_id != runs[0].run_id or last != EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            assert last in (
                EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
                EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
            )
    session = await stored_session(store_url, session_id)
    conversation = [
        (type(m).__name__, _text(m))
        for m in session.derive_messages()
        if isinstance(m, AssistantMessage | UserMessage)
    ]
    expected = []
    for prompt in prompts:
        expected += [("UserMessage", prompt), ("AssistantMessage", f"You said: {prompt}")]
    assert conversation == expected
    await assert_log_rebuilds_the_wire_requests(
        session, model_server, list(model_server.raw_requests)
    )


async def test_every_payload_stays_under_4_kb_however_long_the_conversation(
    client: Client,
    task_queue: str,
    model_server: FakeOpenAIServer,
    side_effects: Path,
    store_url: str,
) -> None:
    session_id = str(uuid.uuid4())
    agent = _agent(store_url)
    turns = 40
    async with running_worker(client, task_queue, model_server, side_effects):
        for number in range(1, turns + 1):
            text = f"turn {number} " + "x" * 1000 if number % 4 else f'call bump {{"n": {number}}}'
            handle = await agent.send(
                client, session_id, text, task_queue=task_queue, continue_after_turns=1000
            )
            status = await _status_until(handle, _idle_after(number))
        description = await handle.describe()
        sizes = await history_payload_sizes(client, handle.id, description.run_id)
        query_size = sum(p.ByteSize() for p in await client.data_converter.encode([status]))

    session = await stored_session(store_url, session_id)
    transcript = sum(
        len(_text(m))
        for m in session.derive_messages()
        if isinstance(m, AssistantMessage | UserMessage)
    )
    assert transcript > 10 * PAYLOAD_BOUND  # the conversation is far larger than the bound
    assert len(sizes) > 4 * turns
    assert max(sizes) < PAYLOAD_BOUND
    assert query_size < PAYLOAD_BOUND
