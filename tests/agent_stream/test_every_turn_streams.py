"""Issue 27 item 5: every turn streams. ``agent.updates()`` gives the typed updates of
whatever runs next (a ``retry()``, a ``regenerate()``, an approval's continuation, the
branch an ``edit()`` starts), with the retry waits (``RetryScheduled``) and the
approvals asked (``ApprovalAsked``) as updates of their own."""

from __future__ import annotations

import asyncio
from typing import Any

from dsh_agent import (
    AgentLoop,
    AgentUpdate,
    ApprovalAsked,
    AssistantCommitted,
    AssistantFailed,
    AssistantStarted,
    MessageClaimed,
    MessageQueued,
    RetryPolicy,
    RetryScheduled,
    StatusUpdate,
    TextDelta,
    ToolCallCommitted,
    ToolResultCommitted,
    TurnEnded,
    TurnStarted,
    UpdateStream,
    UserMessageEntered,
    run,
    tool,
)
from dsh_agent.streaming import ag_ui_events
from dsh_llm import CallId, LlmFailure, TextBlock
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


@tool(requires_approval=True)
async def deploy(version: str) -> str:
    """Deploy a version."""
    return f"deployed {version}"


def _agent(*responses: Any, **options: Any) -> AgentLoop:
    options.setdefault("retry", None)
    return AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter(list(responses)),
        provider="test",
        model="test-model",
        tools=[deploy],
        check_requests=True,
        **options,
    )


async def _drain(updates: UpdateStream) -> list[AgentUpdate]:
    async with updates:
        return [update async for update in updates]


def _kinds(updates: list[AgentUpdate]) -> list[str]:
    return [type(update).__name__ for update in updates]


def _text(updates: list[AgentUpdate]) -> str:
    return "".join(update.text for update in updates if isinstance(update, TextDelta))


async def test_a_retry_streams_its_turn() -> None:
    down = LlmFailure(message="down", code="SERVER")
    agent = _agent(down, "second time lucky")
    failed = await run(agent, "hi", raise_on_error=False)
    assert failed.finish_reason == "error"

    updates = agent.updates(until_idle=True)
    agent.retry()  # the turn opens before this returns: the stream must have it
    seen = await _drain(updates)

    assert _kinds(seen) == [
        "StatusUpdate",
        "TurnStarted",
        "AssistantStarted",
        "TextDelta",
        "AssistantCommitted",
        "TurnEnded",
        "StatusUpdate",
    ]
    assert _text(seen) == "second time lucky"
    end = seen[-2]
    assert isinstance(end, TurnEnded) and end.kind == "completed" and end.turn == 2
    await agent.aclose()


async def test_a_regenerate_streams_its_turn() -> None:
    agent = _agent("first answer", "second answer")
    await run(agent, "hi")

    updates = agent.updates(until_idle=True)
    agent.regenerate()
    seen = await _drain(updates)

    assert _text(seen) == "second answer"
    (committed,) = [u for u in seen if isinstance(u, AssistantCommitted)]
    assert committed.message.content == (TextBlock(text="second answer"),)
    assert isinstance(seen[-1], StatusUpdate) and seen[-1].status == "idle"
    await agent.aclose()


async def test_an_approval_is_asked_on_the_stream_and_its_continuation_streams() -> None:
    call = reply(tool_calls=[{"call_id": "c1", "name": "deploy", "arguments": {"version": "7"}}])
    agent = _agent(call, "deployed it")

    asked_run = await _drain(agent.stream("deploy 7"))
    asked = [u for u in asked_run if isinstance(u, ApprovalAsked)]
    assert len(asked) == 1
    (approval,) = asked
    pending = agent.pending_approvals[0]
    assert (approval.call_id, approval.tool_name, approval.arguments) == (
        "c1",
        "deploy",
        pending.arguments,
    )
    assert (approval.request_id, approval.seq, approval.turn, approval.step) == (
        pending.request_id,
        pending.asked_seq,
        1,
        1,
    )
    committed = next(u for u in asked_run if isinstance(u, AssistantCommitted))
    assert approval.message_id == committed.message_id
    assert not any(isinstance(u, TurnEnded) for u in asked_run)  # the turn waits, open

    updates = agent.updates(until_idle=True)
    await agent.approve(approval.call_id)
    seen = await _drain(updates)

    assert _kinds(seen)[:3] == ["StatusUpdate", "ToolCallCommitted", "ToolResultCommitted"]
    result = next(u for u in seen if isinstance(u, ToolResultCommitted))
    assert not result.is_error and result.call_id == "c1"
    assert _text(seen) == "deployed it"
    assert [u.kind for u in seen if isinstance(u, TurnEnded)] == ["completed"]
    await agent.aclose()


async def test_a_denial_streams_its_continuation() -> None:
    call = reply(tool_calls=[{"call_id": "c1", "name": "deploy", "arguments": {"version": "7"}}])
    agent = _agent(call, "not deployed, then")
    await run(agent, "deploy 7")

    updates = agent.updates(until_idle=True)
    await agent.deny(CallId("c1"), "not today")
    seen = await _drain(updates)

    assert _text(seen) == "not deployed, then"
    assert [u.kind for u in seen if isinstance(u, TurnEnded)] == ["completed"]
    await agent.aclose()


async def test_the_branch_of_an_edit_streams_from_its_start() -> None:
    agent = _agent("an answer", "the edited answer", "later")
    first = await run(agent, "the question")
    assert first.message_id is not None

    branch = await agent.edit(first.message_id, "the better question")
    seen = await _drain(branch.updates(until_idle=True))

    assert _kinds(seen) == [
        "MessageQueued",
        "StatusUpdate",
        "TurnStarted",
        "MessageClaimed",
        "UserMessageEntered",
        "AssistantStarted",
        "TextDelta",
        "AssistantCommitted",
        "TurnEnded",
        "StatusUpdate",
    ]
    queued, entered = seen[0], seen[4]
    assert isinstance(queued, MessageQueued) and isinstance(entered, UserMessageEntered)
    assert queued.message is entered.message
    assert entered.message.source.edit_of == first.message_id  # type: ignore[union-attr]
    assert _text(seen) == "the edited answer"

    # Its start is given once: a later call streams from then on.
    again = branch.updates(until_idle=True)
    later = await run(branch, "and then?")
    seen_later = await _drain(again)
    claimed = [u for u in seen_later if isinstance(u, MessageClaimed)]
    assert [u.message_id for u in claimed] == [later.message_id]
    await branch.aclose()
    await agent.aclose()


async def test_an_unclaimed_branch_start_is_dropped_when_the_branch_is_idle() -> None:
    agent = _agent("an answer", "the edited answer", "later")
    first = await run(agent, "the question")
    assert first.message_id is not None
    branch = await agent.edit(first.message_id, "the better question")
    await branch.when_idle()

    updates = branch.updates(until_idle=True)
    later = await run(branch, "and then?")
    seen = await _drain(updates)
    assert isinstance(seen[0], MessageQueued) and seen[0].message_id == later.message_id
    await branch.aclose()
    await agent.aclose()


async def test_a_retry_wait_is_an_update_with_its_attempt_delay_and_failure() -> None:
    down = LlmFailure(message="HTTP 503: busy", code="SERVER")
    policy = RetryPolicy(max_retries=5, initial_delay_ms=3, jitter_ratio=0)
    agent = _agent(down, down, "finally", retry=policy)

    seen = await _drain(agent.stream("hi"))

    scheduled = [u for u in seen if isinstance(u, RetryScheduled)]
    assert [(u.retry, u.max_retries, u.delay_ms) for u in scheduled] == [(1, 5, 3), (2, 5, 6)]
    assert all(u.failure == down and (u.turn, u.step) == (1, 1) for u in scheduled)
    assert [u.seq for u in scheduled] == [
        e.seq for e in agent.session.events if e.type == "llm/retry"
    ]
    # Each wait follows the failed attempt it retries, and precedes the next attempt.
    kinds = _kinds(seen)
    first_retry = kinds.index("RetryScheduled")
    assert kinds[first_retry - 1] == "AssistantFailed"
    assert kinds[first_retry + 1] == "AssistantStarted"
    failed = [u for u in seen if isinstance(u, AssistantFailed)]
    assert [u.failure for u in failed] == [down, down]
    assert _text(seen) == "finally"

    events = list(ag_ui_events(seen, thread_id=agent.id, run_id="r"))
    retries = [e["value"] for e in events if e.get("name") == "dsh.retry"]
    assert retries[0] == {
        "turn": 1,
        "step": 1,
        "retry": 1,
        "maxRetries": 5,
        "delayMs": 3,
        "code": "SERVER",
        "message": "HTTP 503: busy",
        "seq": scheduled[0].seq,
    }
    assert events[-1]["type"] == "RUN_FINISHED"
    await agent.aclose()


async def test_an_approval_asked_on_ag_ui() -> None:
    call = reply(tool_calls=[{"call_id": "c1", "name": "deploy", "arguments": {"version": "7"}}])
    agent = _agent(call)
    seen = await _drain(agent.stream("deploy 7"))
    asked = next(u for u in seen if isinstance(u, ApprovalAsked))
    events = list(ag_ui_events(seen, thread_id=agent.id, run_id="r"))
    (value,) = [e["value"] for e in events if e.get("name") == "dsh.approval-asked"]
    assert value == {
        "messageId": asked.message_id,
        "toolCallId": "c1",
        "toolCallName": "deploy",
        "arguments": asked.arguments,
        "reason": None,
        "requestId": asked.request_id,
        "seq": asked.seq,
    }
    await agent.aclose()


async def test_updates_follow_the_agent_across_turns_until_it_closes() -> None:
    agent = _agent("one", "two")
    updates = agent.updates()
    await run(agent, "first")
    await run(agent, "second")
    reader = asyncio.ensure_future(_drain(updates))
    await asyncio.sleep(0)
    assert not reader.done()  # idle is not the end of a lifetime stream
    await agent.aclose()
    seen = await asyncio.wait_for(reader, 5)
    assert [u.kind for u in seen if isinstance(u, TurnEnded)] == ["completed", "completed"]
    assert _text(seen) == "onetwo"
    started = [u for u in seen if isinstance(u, TurnStarted | AssistantStarted)]
    assert len(started) == 4


async def test_a_tool_call_joined_mid_turn_names_its_message() -> None:
    call = reply(tool_calls=[{"call_id": "c1", "name": "deploy", "arguments": {"version": "7"}}])
    agent = _agent(call, "done")
    await run(agent, "deploy 7")  # waits for approval, idle, turn open

    updates = agent.updates(until_idle=True)  # subscribed after the call was committed
    await agent.approve(CallId("c1"))
    seen = await _drain(updates)
    call_update = next(u for u in seen if isinstance(u, ToolCallCommitted))
    committed = [e.data.message.id for e in agent.session.events if e.type == "assistant/message"]
    assert call_update.message_id == committed[0]
    await agent.aclose()
