"""Issue 34 #1: a delivery whose turn cannot open (another writer opened one through
the public ``session.append``) is refused whole: nothing is queued or logged, the
agent stays idle, and once the other writer's turn ends the agent works again."""

from __future__ import annotations

import pytest

from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import CompletedReason, SessionValidationError, TurnEndData, TurnStartData

from .support import AgentFactory, prompt


async def test_a_refused_followup_leaves_the_agent_idle_and_usable(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter([reply(text="hello")]))
    session = agent.session
    session.append("turn/start", TurnStartData(turn=1))  # a second writer's turn
    before = len(session.events)

    with pytest.raises(SessionValidationError):
        agent.followup(prompt("first"))

    assert agent.status == "idle"
    assert len(session.events) == before  # nothing queued, nothing logged
    assert not agent.inbox.has_pending
    await agent.when_idle()

    session.append("turn/end", TurnEndData(turn=1, reason=CompletedReason()))
    agent.followup(prompt("second"))
    assert session.open_turn == 2  # started before followup() returned
    await agent.when_idle()
    assert agent.status == "idle"
    ends = [e.data for e in session.events if e.type == "turn/end"]
    assert [(end.turn, end.reason.kind) for end in ends] == [(1, "completed"), (2, "completed")]
    assert session.derive_messages()[-1].role == "assistant"
