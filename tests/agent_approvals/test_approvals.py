"""Approvals within one process: which calls wait, what runs and how often, the
decisions and their errors, and input or cancellation while a turn waits."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence

import pytest

from dsh_agent import AgentError, AgentLoop, ApprovalError, reconstruct_requests, tool
from dsh_llm import CallId
from dsh_llm._content import ToolCallBlock
from dsh_llm.testing import ScriptedAdapter
from dsh_session import (
    ApprovalAskedEvent,
    ApprovalDecidedEvent,
    Session,
    SessionEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)

from .support import Workshop, calls, prompt, result_text, results

LOOK = ("c-look", "look", {"path": "/tmp"})
DELETE = ("c-delete", "delete", {"path": "/etc"})
DEPLOY = ("c-deploy", "deploy", {"version": "v2"})


async def test_the_normal_call_of_the_step_runs_once_and_the_approval_call_waits() -> None:
    shop = Workshop()
    agent, adapter = shop.agent([calls(LOOK, DELETE), "Done."])
    agent.followup(prompt("clean up"))
    await agent.when_idle()

    assert shop.runs == ["look:/tmp"]
    assert agent.status == "idle" and agent.session.open_turn == 1  # idle, turn open
    (waiting,) = agent.pending_approvals
    assert (waiting.call_id, waiting.tool_name) == ("c-delete", "delete")
    assert waiting.arguments == '{"path": "/etc"}' and (waiting.turn, waiting.step) == (1, 1)
    assert isinstance(agent.session.events[waiting.asked_seq], ApprovalAskedEvent)

    await agent.approve(CallId("c-delete"))
    await agent.when_idle()

    assert shop.runs == ["look:/tmp", "delete:/etc"]  # each exactly once
    assert agent.pending_approvals == () and agent.session.open_turn is None
    assert reconstruct_requests(agent.session.events) == adapter.requests
    assert (
        adapter.requests[-1].messages[-1] == results(agent.session.events)["c-delete"].data.message
    )


async def test_calls_after_a_waiting_one_wait_too_and_run_in_model_order() -> None:
    shop = Workshop()
    agent, adapter = shop.agent([calls(DELETE, LOOK, DEPLOY), "Done."])
    agent.followup(prompt("go"))
    await agent.when_idle()
    assert shop.runs == []  # look comes after delete, which waits
    assert [p.call_id for p in agent.pending_approvals] == ["c-delete", "c-deploy"]

    await agent.approve(CallId("c-deploy"))  # decided, but delete still waits before it
    await agent.when_idle()
    assert shop.runs == [] and [p.call_id for p in agent.pending_approvals] == ["c-delete"]

    await agent.deny(CallId("c-delete"), "keep /etc")
    await agent.when_idle()
    assert shop.runs == ["look:/tmp", "deploy:v2"]
    denied = results(agent.session.events)["c-delete"]
    assert denied.data.message.content[0].is_error
    assert "keep /etc" in result_text(denied) and "did not run" in result_text(denied)
    assert denied.data.error is not None and denied.data.error.code == "TOOL_APPROVAL_DENIED"
    assert reconstruct_requests(agent.session.events) == adapter.requests
    (end,) = [e for e in agent.session.events if isinstance(e, TurnEndEvent)]
    assert end.data.reason.kind == "completed"


async def test_deciding_an_unknown_or_decided_call_is_refused_and_writes_nothing() -> None:
    shop = Workshop()
    agent, _ = shop.agent([calls(DELETE), "Done."])
    agent.followup(prompt("go"))
    await agent.when_idle()
    before = agent.session.seq
    with pytest.raises(
        ApprovalError, match=r"no tool call 'nope' is waiting.*'c-delete'"
    ) as raised:
        await agent.approve(CallId("nope"))
    assert raised.value.call_id == "nope" and agent.session.seq == before

    await agent.approve(CallId("c-delete"))
    await agent.when_idle()
    for decide in (agent.approve(CallId("c-delete")), agent.deny(CallId("c-delete"), "late")):
        before = agent.session.seq
        with pytest.raises(ApprovalError, match=r"already decided \(allowed-once"):
            await decide
        assert agent.session.seq == before
    assert shop.runs == ["delete:/etc"]


async def test_a_policy_asks_about_more_calls_but_never_waives_a_tool_s_own_requirement() -> None:
    seen: list[ToolCallBlock] = []

    def policy(call: ToolCallBlock) -> bool | str:
        seen.append(call)
        return "reads outside the workspace" if call.name == "look" else False

    shop = Workshop()
    agent, _ = shop.agent([calls(LOOK, DELETE), "Done."], approval=policy)
    agent.followup(prompt("go"))
    await agent.when_idle()
    pending = agent.pending_approvals
    assert [(p.call_id, p.reason) for p in pending] == [
        ("c-look", "reads outside the workspace"),
        ("c-delete", None),  # the policy said False; the tool requires approval anyway
    ]
    assert [call.call_id for call in seen] == ["c-look", "c-delete"]
    assert shop.runs == []


async def test_a_failing_policy_fails_closed() -> None:
    def policy(call: ToolCallBlock) -> bool:
        raise RuntimeError("policy service down")

    shop = Workshop()
    agent, _ = shop.agent([calls(LOOK), "Done."], approval=policy)
    agent.followup(prompt("go"))
    await agent.when_idle()
    (pending,) = agent.pending_approvals
    assert pending.reason == "the approval policy failed (RuntimeError: policy service down)"
    assert shop.runs == []


async def test_input_sent_while_waiting_waits_for_the_turn_to_go_on() -> None:
    shop = Workshop()
    agent, adapter = shop.agent([calls(DELETE), "Deleted.", "Hello again."])
    agent.followup(prompt("go"))
    await agent.when_idle()
    steer, later = prompt("and be quick"), prompt("next question")
    agent.steer(steer)
    agent.followup(later)
    assert agent.status == "idle" and len(adapter.requests) == 1  # nothing started

    await agent.approve(CallId("c-delete"))
    await agent.when_idle()
    entered = [
        (event.data.id, turn)
        for turn, event in _with_turns(agent.session.events)
        if isinstance(event, UserMessageEvent)
    ]
    assert entered[1:] == [(steer.id, 1), (later.id, 2)]  # the step after, then a turn
    assert reconstruct_requests(agent.session.events) == adapter.requests


def _with_turns(events: Sequence[SessionEvent]) -> Iterator[tuple[int, SessionEvent]]:
    turn = 0
    for event in events:
        if isinstance(event, TurnStartEvent):
            turn = event.data.turn
        yield turn, event


async def test_cancel_while_waiting_withdraws_the_asks_and_ends_the_turn() -> None:
    shop = Workshop()
    agent, adapter = shop.agent([calls(DELETE, LOOK), "Fresh start."])
    agent.followup(prompt("go"))
    await agent.when_idle()
    agent.cancel("user")
    await agent.when_idle()

    events = agent.session.events
    assert agent.session.open_turn is None and agent.pending_approvals == ()
    (decided,) = [e for e in events if isinstance(e, ApprovalDecidedEvent)]
    assert decided.data.outcome == "cancelled"
    codes = {cid: r.data.error.code for cid, r in results(events).items() if r.data.error}
    assert codes == {"c-delete": "ABORTED_BEFORE_DISPATCH", "c-look": "ABORTED_BEFORE_DISPATCH"}
    (end,) = [e for e in events if isinstance(e, TurnEndEvent)]
    assert end.data.reason.kind == "aborted"
    assert shop.runs == []

    agent.followup(prompt("again"))  # the history is a valid request again
    await agent.when_idle()
    assert reconstruct_requests(agent.session.events) == adapter.requests


async def test_a_new_loop_over_the_waiting_session_takes_over_the_decision() -> None:
    shop = Workshop()
    first, _ = shop.agent([calls(LOOK, DELETE)])
    first.followup(prompt("go"))
    await first.when_idle()
    await first.aclose()

    second, adapter = shop.agent(["Done."], session=first.session)
    assert [p.call_id for p in second.pending_approvals] == ["c-delete"]
    await second.approve(CallId("c-delete"))
    await second.when_idle()
    assert shop.runs == ["look:/tmp", "delete:/etc"]
    assert second.session.open_turn is None
    assert reconstruct_requests(second.session.events)[-1] == adapter.requests[-1]


async def test_a_loop_still_refuses_a_session_whose_open_turn_waits_for_nothing() -> None:
    shop = Workshop()
    agent, _ = shop.agent([calls(DELETE)])
    agent.followup(prompt("go"))
    await agent.when_idle()
    await agent.aclose()
    session = agent.session
    session.append("approval/decided", {"id": agent_request_id(session), "outcome": "rejected"})
    with pytest.raises(AgentError, match="has turn 1 open"):
        shop.agent(["x"], session=session)


def agent_request_id(session: Session) -> str:
    (asked,) = [e for e in session.events if isinstance(e, ApprovalAskedEvent)]
    return str(asked.data.id)


async def test_an_approved_call_runs_at_once_while_a_later_one_still_waits() -> None:
    shop = Workshop()
    agent, adapter = shop.agent([calls(DELETE, LOOK, DEPLOY), "Done."])
    agent.followup(prompt("go"))
    await agent.when_idle()
    await agent.approve(CallId("c-delete"))
    await agent.when_idle()
    assert shop.runs == ["delete:/etc", "look:/tmp"]  # up to the call that still waits
    assert [p.call_id for p in agent.pending_approvals] == ["c-deploy"]
    assert len(adapter.requests) == 1

    await agent.approve(CallId("c-deploy"))
    await agent.when_idle()
    assert shop.runs == ["delete:/etc", "look:/tmp", "deploy:v2"]
    assert reconstruct_requests(agent.session.events) == adapter.requests


async def test_the_policy_is_asked_once_per_call() -> None:
    seen: list[str] = []

    def policy(call: ToolCallBlock) -> bool:
        seen.append(call.call_id)
        return False

    shop = Workshop()
    agent, _ = shop.agent([calls(DELETE, LOOK), "Done."], approval=policy)
    agent.followup(prompt("go"))
    await agent.when_idle()
    await agent.approve(CallId("c-delete"))
    await agent.when_idle()
    assert shop.runs == ["delete:/etc", "look:/tmp"]
    assert seen == ["c-delete", "c-look"]  # look was not asked about again on resuming


async def test_a_decision_made_while_an_earlier_call_runs_is_taken_up_by_that_turn() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def slow_look(path: str) -> str:
        """Read a path, slowly."""
        started.set()
        await release.wait()
        return "seen"

    shop = Workshop()
    adapter = ScriptedAdapter([calls(("c-slow", "slow_look", {"path": "/"}), DELETE), "Done."])
    agent = AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="test",
        model="scripted",
        tools=(slow_look, *shop.tools),
    )
    agent.followup(prompt("go"))
    await started.wait()
    assert [p.call_id for p in agent.pending_approvals] == ["c-delete"]  # asked up front
    await agent.approve(CallId("c-delete"))  # while slow_look still runs
    assert agent.status == "running" and shop.runs == []
    release.set()
    await agent.when_idle()
    assert shop.runs == ["delete:/etc"]
    assert agent.session.open_turn is None
    assert reconstruct_requests(agent.session.events) == adapter.requests
