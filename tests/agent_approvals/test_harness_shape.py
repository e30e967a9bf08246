"""The approval events are the harness's: ``approval/asked`` / ``approval/decided`` with
the user-approval package's fields, log-only (no surface op), and the log passes that
package's audit invariants (core of interaction/user-approval/src/invariant.ts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dsh_agent import AgentLoop
from dsh_llm import CallId
from dsh_session import SessionEvent

from .support import Workshop, calls, prompt

OUTCOMES = {"allowed-once", "rejected", "cancelled", "unavailable"}


def _audit_problems(events: Sequence[dict[str, Any]]) -> list[str]:
    """What the harness's approval invariant would fail on, event by event."""
    problems: list[str] = []
    open_turn: int | None = None
    pending: set[str] = set()
    for event in events:
        kind, data = event["type"], event.get("data", {})
        if kind == "turn/start":
            open_turn = data["turn"]
        elif kind == "turn/end":
            open_turn = None
        elif kind == "approval/asked":
            if open_turn is None:
                problems.append(f"{event['seq']}: asked outside any open turn")
            if not data["toolName"]:
                problems.append(f"{event['seq']}: empty toolName")
            if data["id"] in pending:
                problems.append(f"{event['seq']}: repeated open id")
            pending.add(data["id"])
        elif kind == "approval/decided":
            if open_turn is None:
                problems.append(f"{event['seq']}: decided outside any open turn")
            if data["id"] not in pending:
                problems.append(f"{event['seq']}: decided without a matching ask")
            if data["outcome"] not in OUTCOMES:
                problems.append(f"{event['seq']}: unknown outcome {data['outcome']!r}")
            pending.discard(data["id"])
    return problems


def _core_call_problems(events: Sequence[dict[str, Any]]) -> list[str]:
    """What the harness's core session invariant (core/session/src/invariant.ts) fails
    on about tool calls: an appended ``tool/result`` needs a ``tool/call`` for the same
    call earlier in its step, unless it is the synthetic TOOL_NOT_STARTED answer."""
    problems: list[str] = []
    pending: set[str] = set()
    for event in events:
        kind, data = event["type"], event.get("data", {})
        if kind == "step/end":
            pending.clear()
        elif kind == "tool/call":
            pending.add(data["callId"])
        elif kind == "tool/result" and event.get("surfaceOp") == "append":
            call_id = data["message"]["source"]["callId"]
            code = (data.get("error") or {}).get("code")
            if call_id not in pending and code != "TOOL_NOT_STARTED":
                problems.append(f"{event['seq']}: tool/result for {call_id} with no tool/call")
            pending.discard(call_id)
    return problems


def _wire(events: Sequence[SessionEvent]) -> list[dict[str, Any]]:
    return [event.model_dump(mode="json") for event in events]


async def _decided_every_way(shop: Workshop) -> AgentLoop:
    agent, _ = shop.agent(
        [
            calls(("a1", "delete", {"path": "/a"}), ("a2", "deploy", {"version": "v1"})),
            calls(("b1", "delete", {"path": "/b"})),
            "Stopped.",
            calls(("c1", "deploy", {"version": "v3"})),
        ],
        approval=lambda call: "touches /b" if '"/b"' in call.arguments else False,
    )
    agent.followup(prompt("first"))
    await agent.when_idle()
    await agent.approve(CallId("a1"))
    await agent.deny(CallId("a2"), "not now")
    await agent.when_idle()
    await agent.deny(CallId("b1"))
    await agent.when_idle()
    agent.followup(prompt("second"))
    await agent.when_idle()
    agent.cancel("user")
    await agent.when_idle()
    return agent


async def test_approval_events_have_the_harness_shape_and_pass_its_invariants() -> None:
    agent = await _decided_every_way(Workshop())
    wire = _wire(agent.session.events)
    asked = [e for e in wire if e["type"] == "approval/asked"]
    decided = [e for e in wire if e["type"] == "approval/decided"]

    assert [e["data"]["callId"] for e in asked] == ["a1", "a2", "b1", "c1"]
    assert [e["data"]["toolName"] for e in asked] == ["delete", "deploy", "delete", "deploy"]
    assert [e["data"]["outcome"] for e in decided] == [
        "allowed-once",
        "rejected",
        "rejected",
        "cancelled",
    ]
    for event in asked:
        assert set(event) == {"seq", "time", "type", "data"}  # log-only: no surfaceOp
        expected = {"id", "toolName", "callId"} | (
            {"reason"} if event["data"]["callId"] == "b1" else set()
        )
        assert set(event["data"]) == expected
    assert asked[2]["data"]["reason"] == "touches /b"
    for event in decided:
        assert set(event) == {"seq", "time", "type", "data"}
        assert set(event["data"]) == {"id", "outcome"}
    assert [e["data"]["id"] for e in decided] == [e["data"]["id"] for e in asked]
    assert _audit_problems(wire) == []
    assert _core_call_problems(wire) == []


async def test_the_core_check_catches_a_result_with_no_call() -> None:
    agent = await _decided_every_way(Workshop())
    wire = _wire(agent.session.events)
    denied_call = next(e for e in wire if e["type"] == "tool/call" and e["data"]["callId"] == "a2")
    without = [e for e in wire if e is not denied_call]
    assert _core_call_problems(without) == [
        f"{denied_call['seq'] + 1}: tool/result for a2 with no tool/call"
    ]


async def test_the_invariant_check_catches_a_decision_outside_its_turn() -> None:
    agent = await _decided_every_way(Workshop())
    wire = _wire(agent.session.events)
    decided = next(e for e in wire if e["type"] == "approval/decided")
    moved = [e for e in wire if e is not decided] + [decided]  # after the last turn/end
    assert _audit_problems(moved) == [f"{decided['seq']}: decided outside any open turn"]
