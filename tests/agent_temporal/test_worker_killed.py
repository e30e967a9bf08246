"""A worker SIGKILLed at any point: Temporal runs the activity again on a new worker,
which goes on from the log. A model call is asked again only when its answer was not
committed; a tool never runs twice (a counter file on disk counts its effects); a tool
cut off while running is answered TOOL_OUTCOME_UNKNOWN unless declared idempotent."""

from __future__ import annotations

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
from agent_temporal.conftest import WorkerProcess
from agent_temporal.scenario import Conversation, ConversationInput, count
from dsh_llm import AssistantMessage, ToolResultMessage
from dsh_session.events import ToolCallEvent, ToolResultEvent
from dsh_session.tool_failure_codes import TOOL_OUTCOME_UNKNOWN


def _texts(session_messages: object) -> list[str]:
    return [
        "".join(getattr(block, "text", "") for block in message.content)
        for message in session_messages  # type: ignore[attr-defined]
        if isinstance(message, AssistantMessage)
    ]


async def _start(client: Client, store_url: str, task_queue: str, text: str) -> tuple[str, object]:
    session_id = str(uuid.uuid4())
    handle = await client.start_workflow(
        Conversation.run,
        ConversationInput(store_url, session_id, (text,)),
        id=f"conv-{session_id}",
        task_queue=task_queue,
    )
    return session_id, handle


async def test_a_worker_killed_during_a_model_call_is_replaced_and_the_call_asked_again(
    client: Client,
    temporal_address: str,
    task_queue: str,
    model_server: FakeOpenAIServer,
    side_effects: Path,
    store_url: str,
) -> None:
    model_server.delay = 2.0  # the first answer streams slowly: the worker dies inside it
    session_id, handle = await _start(client, store_url, task_queue, 'call bump {"n": 1}')
    first = WorkerProcess(temporal_address, task_queue, model_server.base_url, side_effects)
    await wait_until(lambda: len(model_server.requests) == 1, "the model is asked")
    first.kill()
    model_server.delay = 0.0
    second = WorkerProcess(temporal_address, task_queue, model_server.base_url, side_effects)
    try:
        outcomes = await handle.result()  # type: ignore[attr-defined]
    finally:
        second.kill()

    assert [outcome.reason for outcome in outcomes] == ["completed"]
    assert count(side_effects, "bump") == 1
    session = await stored_session(store_url, session_id)
    assert _texts(session.derive_messages()) == ["", "Tool said: bumped to 1"]
    assert len(model_server.requests) == 3  # the cut-off attempt, then the two answers
    live = model_server.raw_requests[1:3]
    await assert_log_rebuilds_the_wire_requests(session, model_server, live)


async def test_a_tool_cut_off_by_a_killed_worker_runs_once_and_reports_an_unknown_outcome(
    client: Client,
    temporal_address: str,
    task_queue: str,
    model_server: FakeOpenAIServer,
    side_effects: Path,
    any_store_url: str,
) -> None:
    store_url = any_store_url
    (side_effects / "hold").touch()
    session_id, handle = await _start(client, store_url, task_queue, 'call bump {"n": 1}')
    first = WorkerProcess(temporal_address, task_queue, model_server.base_url, side_effects)
    await wait_until(exists(side_effects / "holding"), "the tool runs")
    first.kill()
    (side_effects / "hold").unlink()
    second = WorkerProcess(temporal_address, task_queue, model_server.base_url, side_effects)
    try:
        await handle.result()  # type: ignore[attr-defined]
    finally:
        second.kill()

    assert count(side_effects, "bump") == 1
    assert len(model_server.requests) == 2  # its answer was committed: never asked again
    session = await stored_session(store_url, session_id)
    calls = [e for e in session.events if isinstance(e, ToolCallEvent)]
    results = [e for e in session.events if isinstance(e, ToolResultEvent)]
    assert len(calls) == 1 and len(results) == 1
    assert results[0].data.error is not None
    assert results[0].data.error.code == TOOL_OUTCOME_UNKNOWN
    assert results[0].source_event_seqs == (calls[0].seq,)
    assert _texts(session.derive_messages())[-1].startswith("Tool said: The tool call was")
    await assert_log_rebuilds_the_wire_requests(
        session, model_server, list(model_server.raw_requests)
    )


async def test_an_idempotent_tool_cut_off_runs_again_with_the_same_key_and_takes_effect_once(
    client: Client,
    temporal_address: str,
    task_queue: str,
    model_server: FakeOpenAIServer,
    side_effects: Path,
    store_url: str,
) -> None:
    (side_effects / "hold").touch()
    session_id, handle = await _start(client, store_url, task_queue, 'call bump_once {"n": 1}')
    first = WorkerProcess(temporal_address, task_queue, model_server.base_url, side_effects)
    await wait_until(exists(side_effects / "holding"), "the tool runs")
    first.kill()
    (side_effects / "hold").unlink()
    second = WorkerProcess(temporal_address, task_queue, model_server.base_url, side_effects)
    try:
        await handle.result()  # type: ignore[attr-defined]
    finally:
        second.kill()

    assert count(side_effects, "bump_once") == 1
    keys = (side_effects / "bump_once.keys").read_text().split()
    assert keys == ["dsh-tool-call-call-1"]  # the key derived from the call id
    session = await stored_session(store_url, session_id)
    results = [m for m in session.derive_messages() if isinstance(m, ToolResultMessage)]
    assert len(results) == 1 and not results[0].content[0].is_error
    assert _texts(session.derive_messages()) == ["", "Tool said: bumped once to 1"]
    calls = [e for e in session.events if isinstance(e, ToolCallEvent)]
    assert len(calls) == 1  # run again under its first tool/call, not logged twice
