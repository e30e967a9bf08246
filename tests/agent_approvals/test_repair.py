"""Crash repair and a turn waiting on approval: the turn stays open (a person can still
answer), a started call is answered as of unknown outcome and never rerun, and a turn
whose asks were all decided is closed as any crashed turn."""

from __future__ import annotations

import asyncio
from typing import Any

from dsh_agent import AgentLoop, reconstruct_requests, tool
from dsh_llm import CallId
from dsh_llm.testing import ScriptedAdapter
from dsh_session import Session, SessionEvent, interrupted_turn_closers
from dsh_session.stores._recovery import restore_session

from .support import Workshop, calls, prompt, results

DELETE = ("c-delete", "delete", {"path": "/etc"})
DEPLOY = ("c-deploy", "deploy", {"version": "v2"})


async def _waiting(shop: Workshop, *specs: tuple[str, str, dict[str, Any]]) -> AgentLoop:
    agent, _ = shop.agent([calls(*specs)])
    agent.followup(prompt("go"))
    await agent.when_idle()
    return agent


async def test_a_turn_waiting_on_approval_is_left_open_by_repair() -> None:
    shop = Workshop()
    agent = await _waiting(shop, ("c-look", "look", {"path": "/"}), DELETE)
    await agent.aclose()
    events = list(agent.session.events)

    assert interrupted_turn_closers(events) == []
    restored = restore_session(agent.session.header, events)
    assert restored.open_turn == 1 and restored.open_step == 1
    again, adapter = shop.agent(["Done."], session=restored)
    assert [p.call_id for p in again.pending_approvals] == ["c-delete"]
    await again.approve(CallId("c-delete"))
    await again.when_idle()
    assert shop.runs == ["look:/", "delete:/etc"]
    assert reconstruct_requests(restored.events)[-1] == adapter.requests[-1]


async def test_a_call_killed_while_running_gets_an_unknown_outcome_and_is_never_rerun() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    runs: list[str] = []

    @tool(requires_approval=True)
    async def delete(path: str) -> str:
        """Delete a path, slowly."""
        runs.append(path)
        started.set()
        await release.wait()
        return "deleted"

    shop = Workshop()
    tools = (delete, *(t for t in shop.tools if t.name != "delete"))
    agent = AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([calls(DELETE, DEPLOY)]),
        provider="test",
        model="scripted",
        tools=tools,
    )
    agent.followup(prompt("go"))
    await agent.when_idle()
    await agent.approve(CallId("c-delete"))
    await started.wait()
    crashed = list(agent.session.events)  # what the disk holds when the process dies here

    closers = interrupted_turn_closers(crashed)
    assert [event.type for event in closers] == ["tool/result"]  # no step/turn end
    assert closers[0].type == "tool/result"
    assert closers[0].data.error is not None
    assert closers[0].data.error.code == "TOOL_OUTCOME_UNKNOWN"
    restored = restore_session(agent.session.header, crashed)
    again = AgentLoop(
        session=restored,
        adapter=ScriptedAdapter(["Done."]),
        provider="test",
        model="scripted",
        tools=tools,
    )
    assert [p.call_id for p in again.pending_approvals] == ["c-deploy"]
    await again.approve(CallId("c-deploy"))
    await again.when_idle()
    assert runs == ["/etc"]  # started once, in the process that died; never again
    assert shop.runs == ["deploy:v2"]
    assert restored.open_turn is None
    release.set()
    await agent.aclose()


async def test_a_turn_whose_asks_were_all_decided_is_closed_as_interrupted() -> None:
    shop = Workshop()
    agent = await _waiting(shop, DELETE)
    await agent.aclose()
    session = agent.session
    (waiting,) = agent.pending_approvals
    # the decision reached the log, the process died before the call started
    session.append("approval/decided", {"id": waiting.request_id, "outcome": "allowed-once"})
    events: list[SessionEvent] = list(session.events)

    closers = interrupted_turn_closers(events)
    assert [event.type for event in closers] == ["tool/result", "step/end", "turn/end"]
    assert closers[0].type == "tool/result"
    assert closers[0].data.error is not None
    assert closers[0].data.error.code == "TOOL_NOT_STARTED"
    restored = restore_session(session.header, events)
    assert restored.open_turn is None
    assert "c-delete" in results(restored.events) and shop.runs == []
