"""The ready workflow's ``followup``, ``steer`` and ``cancel`` on a real dev server: a
followup sent twice is stored once, a steer reaches the running turn's next step, a
cancel ends the running turn ``aborted`` with a valid log and the workflow goes on.

A turn is held mid-tool deterministically: the ``bump`` tool waits while the file
``hold`` exists (and says so with ``holding``), so the signal is in before the turn's
next piece is scheduled."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

from cli.openai_server import FakeOpenAIServer
from temporalio.client import WorkflowHandle

from agent_temporal.checks import (
    PAYLOAD_BOUND,
    awaiting_approval,
    conversation,
    exists,
    history_payload_sizes,
    idle_after,
    status_until,
    wait_until,
)
from agent_temporal.conftest import Rig
from agent_temporal.scenario import count, scripted_tools
from dsh_agent import AgentLoop
from dsh_agent.temporal import SessionStatus, SessionWorkflow, TemporalAgent
from dsh_llm import create_user_message
from dsh_llm.providers import adapter_for
from dsh_session import Session, tool_failure_codes
from dsh_session.events import (
    AbortedReason,
    ApprovalDecidedEvent,
    StepStartEvent,
    ToolResultEvent,
    TurnEndEvent,
    UserCause,
    UserMessageEvent,
)


def _turn_ends(session: Session) -> list[str]:
    return [e.data.reason.kind for e in session.events if isinstance(e, TurnEndEvent)]


async def _held_turn(rig: Rig, session_id: str) -> WorkflowHandle[SessionWorkflow, None]:
    """Start a turn whose ``bump`` call waits until the test removes ``hold``."""
    (rig.effects / "hold").touch()
    handle = await rig.agent().send(
        rig.client, session_id, 'call bump {"n": 1}', task_queue=rig.task_queue
    )
    await wait_until(exists(rig.effects / "holding"), "the tool holds")
    return handle


async def _let_go(
    handle: WorkflowHandle[SessionWorkflow, None],
    rig: Rig,
    signalled: Callable[[SessionStatus], bool],
    turns: int,
) -> SessionStatus:
    await status_until(handle, signalled)  # the workflow has the signal
    (rig.effects / "hold").unlink()
    return await status_until(handle, idle_after(turns))


async def test_a_followup_sent_twice_with_one_id_is_stored_once(rig: Rig) -> None:
    session_id, agent, queue = str(uuid.uuid4()), rig.agent(), rig.task_queue
    async with rig.worker():
        for _ in range(2):  # the second while the first may still be queued
            handle = await agent.send(
                rig.client, session_id, "hello", task_queue=queue, message_id="m-hello"
            )
        await status_until(handle, idle_after(1))
        await agent.send(rig.client, session_id, "hello", task_queue=queue, message_id="m-hello")
        await agent.send(rig.client, session_id, "again", task_queue=queue, message_id="m-again")
        status = await status_until(handle, idle_after(2))

    session = await rig.session(session_id)
    ids = [str(e.data.id) for e in session.events if isinstance(e, UserMessageEvent)]
    assert ids == ["m-hello", "m-again"]
    assert status.turns == 2
    assert conversation(session) == [
        ("UserMessage", "hello"),
        ("AssistantMessage", "You said: hello"),
        ("UserMessage", "again"),
        ("AssistantMessage", "You said: again"),
    ]
    await rig.assert_log_rebuilds_the_wire_requests(session)


async def test_a_steer_reaches_the_running_turns_next_step(rig: Rig) -> None:
    session_id = str(uuid.uuid4())
    async with rig.worker():
        handle = await _held_turn(rig, session_id)
        for _ in range(2):  # sent twice: stored once
            await rig.agent().send(
                rig.client,
                session_id,
                "and mind the cat",
                task_queue=rig.task_queue,
                kind="steer",
                message_id="m-steer",
            )
        status = await _let_go(handle, rig, lambda s: s.queued_steers == 1, turns=1)

    session = await rig.session(session_id)
    steps: dict[str, tuple[int, int]] = {}
    step = (0, 0)
    for event in session.events:
        if isinstance(event, StepStartEvent):
            step = (event.data.turn, event.data.step)
        if isinstance(event, UserMessageEvent):
            steps[str(event.data.id)] = step
    entered = [str(e.data.id) for e in session.events if isinstance(e, UserMessageEvent)]
    assert steps["m-steer"] == (1, 2)  # entered the same turn, with the step after the tool
    assert entered.count("m-steer") == 1
    assert status.turns == 1 and _turn_ends(session) == ["completed"]
    assert conversation(session)[-2:] == [
        ("UserMessage", "and mind the cat"),
        ("AssistantMessage", "You said: and mind the cat"),
    ]
    await rig.assert_log_rebuilds_the_wire_requests(session)


async def test_a_cancel_mid_turn_ends_it_aborted_and_the_next_followup_is_served(rig: Rig) -> None:
    session_id = str(uuid.uuid4())
    async with rig.worker():
        handle = await _held_turn(rig, session_id)
        asked = len(rig.model.raw_requests)
        await TemporalAgent.cancel(rig.client, session_id)
        await _let_go(handle, rig, lambda s: s.cancelling, turns=1)
        not_asked_again = len(rig.model.raw_requests) == asked
        await rig.agent().send(rig.client, session_id, "still there?", task_queue=rig.task_queue)
        status = await status_until(handle, idle_after(2))
        run_id = (await handle.describe()).run_id
        sizes = await history_payload_sizes(rig.client, handle.id, run_id)

    session = await rig.session(session_id)
    first_end = next(e for e in session.events if isinstance(e, TurnEndEvent))
    assert first_end.data.reason == AbortedReason(reason=UserCause())
    assert _turn_ends(session) == ["aborted", "completed"]
    assert not_asked_again  # the model was not asked for the step after the tool
    assert max(sizes) < PAYLOAD_BOUND  # the cancel signal and the abort activity too
    assert status.turns == 2 and not status.cancelling
    assert conversation(session)[-1] == ("AssistantMessage", "You said: still there?")
    await rig.assert_log_rebuilds_the_wire_requests(session)


async def test_a_cancel_while_a_call_awaits_approval_answers_it_aborted_before_dispatch(
    rig: Rig,
) -> None:
    session_id, agent = str(uuid.uuid4()), rig.agent()
    async with rig.worker():
        handle = await agent.send(
            rig.client, session_id, 'call guarded {"n": 1}', task_queue=rig.task_queue
        )
        await status_until(handle, awaiting_approval)
        await TemporalAgent.cancel(rig.client, session_id)
        await status_until(handle, idle_after(1))
        await agent.send(rig.client, session_id, "next", task_queue=rig.task_queue)
        status = await status_until(handle, idle_after(2))

    session = await rig.session(session_id)
    results = [e.data for e in session.events if isinstance(e, ToolResultEvent)]
    decided = [e.data for e in session.events if isinstance(e, ApprovalDecidedEvent)]
    assert count(rig.effects, "guarded") == 0
    assert [r.error.code if r.error else None for r in results] == [
        tool_failure_codes.ABORTED_BEFORE_DISPATCH
    ]
    assert [d.outcome for d in decided] == ["cancelled"]
    assert _turn_ends(session) == ["aborted", "completed"]
    assert status.awaiting_approval == ()
    await rig.assert_log_rebuilds_the_wire_requests(session)
    local = await _local_loop_cancelled_while_waiting(rig.model, rig.effects)
    assert _first_turn(session) == _first_turn(local)  # the log the agent loop writes


async def _local_loop_cancelled_while_waiting(server: FakeOpenAIServer, folder: Path) -> Session:
    """The same turn in one process: the agent loop, cancelled while ``guarded`` waits."""
    agent = AgentLoop(
        session=Session.create(),
        adapter=adapter_for(f"openai-compatible:scripted-model@{server.base_url}"),
        provider="openai-compatible",
        model="scripted-model",
        tools=scripted_tools(folder),
    )
    agent.followup(create_user_message('call guarded {"n": 1}'))
    await agent.when_idle()
    assert agent.pending_approvals
    agent.cancel("user")
    await agent.when_idle()
    await agent.aclose()
    return agent.session


def _first_turn(session: Session) -> list[tuple[str, object]]:
    """Turn 1's events as (type, what they say that does not vary between runs)."""
    start = next(i for i, e in enumerate(session.events) if e.type == "turn/start")
    end = next(i for i, e in enumerate(session.events) if e.type == "turn/end")
    shown: list[tuple[str, object]] = []
    for event in session.events[start : end + 1]:
        if event.type == "session/end-seed":  # a resuming load's mark: between activities
            continue
        detail: object = None
        if isinstance(event, ToolResultEvent):
            blocks = event.data.message.content  # the call ids differ: the server counts
            detail = ([(b.content, b.is_error) for b in blocks], event.data.error)
        elif isinstance(event, ApprovalDecidedEvent):
            detail = event.data.outcome
        elif isinstance(event, TurnEndEvent):
            detail = event.data.reason
        shown.append((event.type, detail))
    return shown
