"""What a durable agent's activities refuse, through the public API: a piece that does
not fit the log fails with ``DurableStepError``, at once and without a retry (Temporal
retries only pieces that may succeed elsewhere), and the log is left as it was."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ActivityError, ApplicationError, RetryState

from agent_temporal.conftest import Rig
from agent_temporal.scenario import Conversation, ConversationInput, OnePiece, OnePieceInput
from dsh_agent.temporal import ModelStepInput, ToolStepInput
from dsh_llm import CallId
from dsh_session import Session


async def _refusal(rig: Rig, given: OnePieceInput) -> ApplicationError:
    with pytest.raises(WorkflowFailureError) as failed:
        await rig.client.execute_workflow(
            OnePiece.run,
            given,
            id=f"one-piece-{uuid.uuid4()}",
            task_queue=rig.task_queue,
        )
    activity_error = failed.value.cause
    assert isinstance(activity_error, ActivityError)
    assert activity_error.retry_state == RetryState.NON_RETRYABLE_FAILURE  # no second attempt
    cause = activity_error.cause
    assert isinstance(cause, ApplicationError)
    assert cause.type == "DurableStepError" and cause.non_retryable
    return cause


def _only_resumed(before: Session, after: Session) -> None:
    """``after`` is ``before`` plus at most the ``session/end-seed`` a load that
    resumes the session appends: the refused piece changed nothing else."""
    assert after.events[: before.seq] == before.events
    assert {event.type for event in after.events[before.seq :]} <= {"session/end-seed"}


async def _conversation(rig: Rig) -> tuple[str, int]:
    """A session with one tool-using turn, on a worker the caller runs; its id and the
    seq its log ends at."""
    session_id = str(uuid.uuid4())
    given = ConversationInput(rig.store_url, session_id, ('call bump {"n": 1}',))
    outcomes = await rig.client.execute_workflow(
        Conversation.run, given, id=f"conversation-{uuid.uuid4()}", task_queue=rig.task_queue
    )
    return session_id, outcomes[-1].end_seq


async def test_a_tool_call_with_an_unknown_call_id_is_refused(rig: Rig) -> None:
    async with rig.worker():
        session_id, end_seq = await _conversation(rig)
        before = await rig.session(session_id)
        given = ToolStepInput(rig.store_url, session_id, end_seq, CallId("call-unknown"))
        refusal = await _refusal(rig, OnePieceInput(tool_call=given))

    assert "'call-unknown' is not a call of the open step" in refusal.message
    after = await rig.session(session_id)
    assert before.seq == end_seq
    _only_resumed(before, after)


async def test_a_step_from_a_seq_the_log_has_not_reached_is_refused(rig: Rig) -> None:
    async with rig.worker():
        session_id, end_seq = await _conversation(rig)
        before = await rig.session(session_id)
        given = ModelStepInput(rig.store_url, session_id, end_seq + 5)
        model_refusal = await _refusal(rig, OnePieceInput(model_step=given))
        call = ToolStepInput(rig.store_url, session_id, end_seq + 5, CallId("call-1"))
        tool_refusal = await _refusal(rig, OnePieceInput(tool_call=call))

    for refusal in (model_refusal, tool_refusal):
        assert f"before seq {end_seq + 5} the workflow already saw" in refusal.message
    _only_resumed(before, await rig.session(session_id))


async def test_a_model_step_naming_a_message_never_delivered_is_refused(rig: Rig) -> None:
    async with rig.worker():
        session_id, end_seq = await _conversation(rig)
        asked = len(rig.model.raw_requests)
        given = ModelStepInput(rig.store_url, session_id, end_seq, ("m-never-sent",))
        refusal = await _refusal(rig, OnePieceInput(model_step=given))

    assert "'m-never-sent' is neither queued nor entered" in refusal.message
    assert len(rig.model.raw_requests) == asked
