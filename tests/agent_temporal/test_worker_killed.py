"""A worker SIGKILLed at any point: Temporal runs the activity again on a new worker,
which goes on from the log. A model call is asked again only when its answer was not
committed; a tool never runs twice (a counter file on disk counts its effects); a tool
cut off while running is answered TOOL_OUTCOME_UNKNOWN unless declared idempotent."""

from __future__ import annotations

import uuid

from temporalio.client import WorkflowHandle

from agent_temporal.checks import assistant_texts, exists, wait_until
from agent_temporal.conftest import Rig
from agent_temporal.scenario import Conversation, ConversationInput, count
from dsh_agent.temporal import TurnOutcome
from dsh_llm import ToolResultMessage
from dsh_session.events import ToolCallEvent, ToolResultEvent
from dsh_session.tool_failure_codes import TOOL_OUTCOME_UNKNOWN


async def _start(
    rig: Rig, text: str
) -> tuple[str, WorkflowHandle[Conversation, list[TurnOutcome]]]:
    session_id = str(uuid.uuid4())
    handle = await rig.client.start_workflow(
        Conversation.run,
        ConversationInput(rig.store_url, session_id, (text,)),
        id=f"conv-{session_id}",
        task_queue=rig.task_queue,
    )
    return session_id, handle


async def _run_with_a_worker_killed_inside_the_tool(rig: Rig, text: str) -> str:
    """Run a one-message conversation whose first worker is SIGKILLed while its tool
    holds; a second worker finishes it. The session's id."""
    (rig.effects / "hold").touch()
    session_id, handle = await _start(rig, text)
    first = rig.worker_process()
    await wait_until(exists(rig.effects / "holding"), "the tool runs")
    first.kill()
    (rig.effects / "hold").unlink()
    second = rig.worker_process()
    try:
        await handle.result()
    finally:
        second.kill()
    return session_id


async def test_a_worker_killed_during_a_model_call_is_replaced_and_the_call_asked_again(
    rig: Rig,
) -> None:
    rig.model.delay = 2.0  # the first answer streams slowly: the worker dies inside it
    session_id, handle = await _start(rig, 'call bump {"n": 1}')
    first = rig.worker_process()
    await wait_until(lambda: len(rig.model.requests) == 1, "the model is asked")
    first.kill()
    rig.model.delay = 0.0
    second = rig.worker_process()
    try:
        outcomes = await handle.result()
    finally:
        second.kill()

    assert [outcome.reason for outcome in outcomes] == ["completed"]
    assert count(rig.effects, "bump") == 1
    session = await rig.session(session_id)
    assert assistant_texts(session) == ["", "Tool said: bumped to 1"]
    assert len(rig.model.requests) == 3  # the cut-off attempt, then the two answers
    await rig.assert_log_rebuilds_the_wire_requests(session, rig.model.raw_requests[1:3])


async def test_a_tool_cut_off_by_a_killed_worker_runs_once_and_reports_an_unknown_outcome(
    any_store_rig: Rig,
) -> None:
    rig = any_store_rig
    session_id = await _run_with_a_worker_killed_inside_the_tool(rig, 'call bump {"n": 1}')

    assert count(rig.effects, "bump") == 1
    assert len(rig.model.requests) == 2  # its answer was committed: never asked again
    session = await rig.session(session_id)
    calls = [e for e in session.events if isinstance(e, ToolCallEvent)]
    results = [e for e in session.events if isinstance(e, ToolResultEvent)]
    assert len(calls) == 1 and len(results) == 1
    assert results[0].data.error is not None
    assert results[0].data.error.code == TOOL_OUTCOME_UNKNOWN
    assert results[0].source_event_seqs == (calls[0].seq,)
    assert assistant_texts(session)[-1].startswith("Tool said: The tool call was")
    await rig.assert_log_rebuilds_the_wire_requests(session)


async def test_an_idempotent_tool_cut_off_runs_again_with_the_same_key_and_takes_effect_once(
    rig: Rig,
) -> None:
    session_id = await _run_with_a_worker_killed_inside_the_tool(rig, 'call bump_once {"n": 1}')

    assert count(rig.effects, "bump_once") == 1
    keys = (rig.effects / "bump_once.keys").read_text().split()
    assert keys == ["dsh-tool-call-call-1"]  # the key derived from the call id
    session = await rig.session(session_id)
    results = [m for m in session.derive_messages() if isinstance(m, ToolResultMessage)]
    assert len(results) == 1 and not results[0].content[0].is_error
    assert assistant_texts(session) == ["", "Tool said: bumped once to 1"]
    calls = [e for e in session.events if isinstance(e, ToolCallEvent)]
    assert len(calls) == 1  # run again under its first tool/call, not logged twice
