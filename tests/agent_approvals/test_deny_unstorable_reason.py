"""Issue 34 #3: a denial whose reason cannot be stored (a lone surrogate, as
``os.fsdecode`` yields for a non-UTF-8 path) is refused before it is decided: nothing
is written, the call still waits, and a corrected ``deny`` goes on with the turn."""

from __future__ import annotations

import os

import pytest

from dsh_agent import ApprovalError
from dsh_llm import CallId
from dsh_session import ApprovalDecidedEvent, TurnEndEvent

from .support import Workshop, calls, prompt, result_text, results

DELETE = ("c-delete", "delete", {"path": "/etc"})


async def test_a_deny_with_an_unstorable_reason_writes_nothing_and_can_be_corrected() -> None:
    shop = Workshop()
    agent, _ = shop.agent([calls(DELETE), "Done."])
    agent.followup(prompt("clean up"))
    await agent.when_idle()
    before = len(agent.session.events)
    reason = "keep " + os.fsdecode(b"/etc/caf\xe9")  # a lone surrogate

    with pytest.raises(ApprovalError, match="cannot be stored"):
        await agent.deny(CallId("c-delete"), reason)

    assert len(agent.session.events) == before  # not decided, nothing written
    assert [p.call_id for p in agent.pending_approvals] == ["c-delete"]

    await agent.deny(CallId("c-delete"), "keep /etc")
    await agent.when_idle()
    assert shop.runs == []
    assert "keep /etc" in result_text(results(agent.session.events)["c-delete"])
    decided = [e for e in agent.session.events if isinstance(e, ApprovalDecidedEvent)]
    assert [e.data.outcome for e in decided] == ["rejected"]
    (end,) = [e for e in agent.session.events if isinstance(e, TurnEndEvent)]
    assert end.data.reason.kind == "completed"
    assert agent.status == "idle" and agent.session.open_turn is None
