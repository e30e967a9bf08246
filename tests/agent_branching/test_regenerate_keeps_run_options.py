"""``regenerate()`` answers the last prompt again with the options of the run that sent
it (settings, instructions, recorded in its turn's ``turn/start``), not the loop's."""

from __future__ import annotations

from dsh_agent import AgentLoop, ModelSettings, reconstruct_requests, run
from dsh_llm.testing import ScriptedAdapter
from dsh_session import Session, TurnStartEvent


async def test_a_regenerated_answer_keeps_the_options_of_its_run() -> None:
    adapter = ScriptedAdapter(["First.", "Second."])
    agent = AgentLoop(session=Session.create(), adapter=adapter, provider="t", model="m")

    settings = ModelSettings(temperature=0, max_tokens=77)
    await run(agent, "Hi", settings=settings, instructions="Be brief.")
    agent.regenerate()
    await agent.when_idle()

    sent = [(r.temperature, r.max_tokens, r.system) for r in adapter.requests]
    assert sent == [(0.0, 77, "Be brief."), (0.0, 77, "Be brief.")]
    assert [m.role for m in adapter.requests[1].messages] == ["user"]  # the answer left
    starts = [e.data.run_options for e in agent.session.events if isinstance(e, TurnStartEvent)]
    assert starts[0] == starts[1] is not None
    assert reconstruct_requests(agent.session.events) == adapter.requests
    await agent.aclose()
