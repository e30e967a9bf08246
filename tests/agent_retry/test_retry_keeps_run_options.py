"""``retry()`` runs the failed last turn again with the options of the run that opened
it (settings, instructions), recorded in its ``turn/start``; a later run without
options is back to the loop's."""

from __future__ import annotations

from dsh_agent import AgentLoop, ModelSettings, reconstruct_requests, run, run_retry
from dsh_llm import LlmFailure
from dsh_llm.testing import ScriptedAdapter
from dsh_session import Session, TurnStartEvent


async def test_a_retried_turn_keeps_the_options_of_its_run() -> None:
    adapter = ScriptedAdapter([LlmFailure(message="down", code="SERVER"), "Up again.", "Plain."])
    agent = AgentLoop(
        session=Session.create(), adapter=adapter, provider="t", model="m", retry=None
    )

    failed = await run(
        agent,
        "Hi",
        settings=ModelSettings(temperature=0, max_tokens=77),
        instructions="Be brief.",
        raise_on_error=False,
    )
    assert failed.finish_reason == "error"
    assert (await run_retry(agent)).final_response == "Up again."
    await run(agent, "Then?")

    sent = [(r.temperature, r.max_tokens, r.system) for r in adapter.requests]
    assert sent == [(0.0, 77, "Be brief."), (0.0, 77, "Be brief."), (None, None, None)]
    starts = [e.data.run_options for e in agent.session.events if isinstance(e, TurnStartEvent)]
    assert starts[0] == starts[1] is not None
    assert starts[2] is None
    assert reconstruct_requests(agent.session.events) == adapter.requests
    await agent.aclose()
