"""Owned runs (SPEC §4.7): ``run()`` sends a followup and reports the interval up to
the next idle."""

from __future__ import annotations

import pytest

from dsh_agent import TurnFailed, run, tool
from dsh_llm import LlmFailure
from dsh_llm.testing import ScriptedAdapter, reply

from .support import AgentFactory, fixed


async def test_run_reports_the_final_answer_and_the_events_of_the_interval(
    make_agent: AgentFactory,
) -> None:
    @tool
    async def lookup(city: str) -> str:
        """Look up the weather."""
        return f"sunny in {city}"

    calls = reply(tool_calls=[{"call_id": "c1", "name": "lookup", "arguments": {"city": "Oslo"}}])
    agent = make_agent(ScriptedAdapter([calls, "It is sunny."]), tools=[lookup])
    question = fixed("q1", "weather in Oslo?")

    result = await run(agent, question)

    assert result.final_response == "It is sunny."
    assert result.finish_reason == "completed"
    assert result.events[0].type == "agent/inbox/spliced"
    assert result.events[0].data.inserted[0] is question
    assert result.events[-1].type == "turn/end"
    assert tuple(agent.session.events) == result.events


async def test_run_starts_at_the_message_receipt(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter(["first", "second"]))
    await run(agent, fixed("q1", "one"))

    result = await run(agent, fixed("q2", "two"))

    assert result.events[0].type == "agent/inbox/spliced"
    assert result.events[0].data.inserted[0].id == "q2"
    assert result.final_response == "second"


async def test_a_failed_run_has_no_final_response(make_agent: AgentFactory) -> None:
    failure = LlmFailure(message="overloaded", code="SERVER")
    agent = make_agent(ScriptedAdapter([failure]))

    result = await run(agent, fixed("q1", "hi"), raise_on_error=False)

    assert result.final_response is None
    assert result.finish_reason == "error"
    assert result.failure == failure


async def test_a_failed_run_raises_turn_failed_with_the_failure_and_the_result(
    make_agent: AgentFactory,
) -> None:
    failure = LlmFailure(message="overloaded", code="SERVER")
    agent = make_agent(ScriptedAdapter([failure]))

    with pytest.raises(
        TurnFailed, match=r"^the model call failed \(SERVER\): overloaded$"
    ) as raised:
        await run(agent, fixed("q1", "hi"))

    assert raised.value.failure == failure
    assert raised.value.result.failure == failure
    assert raised.value.result.finish_reason == "error"


async def test_run_with_bare_text_creates_the_user_message(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter(["hi there"]))

    result = await run(agent, "hello")

    assert result.events[0].type == "agent/inbox/spliced"
    created = result.events[0].data.inserted[0]
    assert (created.id, created.source.kind) == (result.message_id, "user")
    assert result.final_response == "hi there"
