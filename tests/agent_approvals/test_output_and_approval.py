"""A final_result committed in the same step as a call that then waits for approval:
the run has its output at once, and once the call is decided the turn ends there
(completed, no further model step), as the concluding result said."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from dsh_agent import run
from dsh_llm import CallId
from dsh_llm.testing import Response, reply
from dsh_session import ToolResultEvent, TurnEndEvent

from .support import Workshop, prompt


class Cleanup(BaseModel):
    removed: str


def _script() -> list[Response]:
    both = reply(
        tool_calls=[
            {"call_id": "out", "name": "final_result", "arguments": {"removed": "/tmp/x"}},
            {"call_id": "rm", "name": "delete", "arguments": {"path": "/tmp/x"}},
        ]
    )
    return [both, "a step that must not be requested"]


@pytest.mark.parametrize("decision", ["approve", "deny"])
async def test_the_turn_ends_with_the_output_once_the_waiting_call_is_decided(
    decision: str,
) -> None:
    workshop = Workshop()
    agent, adapter = workshop.agent(_script())

    result = await run(agent, prompt("clean up"), output_type=Cleanup)

    assert result.output == Cleanup(removed="/tmp/x")
    assert [p.call_id for p in agent.pending_approvals] == ["rm"]
    if decision == "approve":
        await agent.approve(CallId("rm"))
    else:
        await agent.deny(CallId("rm"), "not today")
    await agent.when_idle()

    events = agent.session.events
    ends = [e for e in events if isinstance(e, TurnEndEvent)]
    assert [e.data.reason.kind for e in ends] == ["completed"]
    assert len(adapter.requests) == 1  # the concluded turn asked the model nothing more
    results = [e.data.message.source.call_id for e in events if isinstance(e, ToolResultEvent)]
    assert results == ["out", "rm"]
    assert workshop.runs == (["delete:/tmp/x"] if decision == "approve" else [])
    await agent.aclose()
