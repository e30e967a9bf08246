"""Structured output: ``run(agent, message, output_type=Model)`` offers a final-result
tool, validates the answer, sends validation errors back a bounded number of times,
and keeps every request reconstructable from the log."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from dsh_agent import AgentLoop, OutputValidationError, SyncAgent, run
from dsh_agent.requests import diff_requests, reconstruct_requests
from dsh_llm import UserMessage, create_user_message
from dsh_llm.testing import Reply, ScriptedAdapter, reply
from dsh_session import Session


class City(BaseModel):
    """A city and its population."""

    name: str
    population: int = Field(ge=0)


def ask(text: str) -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def answer(arguments: dict[str, Any], call_id: str = "c1") -> Reply:
    return reply(tool_calls=[{"call_id": call_id, "name": "final_result", "arguments": arguments}])


def make_agent(adapter: ScriptedAdapter) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="test",
        model="test-model",
        check_requests=True,
    )


def assert_reconstructed(agent: AgentLoop, adapter: ScriptedAdapter) -> None:
    rebuilt = reconstruct_requests(agent.session.events)
    assert len(rebuilt) == len(adapter.requests)
    for live, again in zip(adapter.requests, rebuilt, strict=True):
        assert diff_requests(live, again) == []


async def test_a_valid_answer_becomes_the_output_and_ends_the_turn() -> None:
    adapter = ScriptedAdapter([answer({"name": "Paris", "population": 2100000}), "later"])
    agent = make_agent(adapter)
    result = await run(agent, ask("Largest French city?"), output_type=City)

    assert result.output == City(name="Paris", population=2100000)
    assert result.finish_reason == "completed"
    [request] = adapter.requests  # no model step after the answer
    [offered] = request.tools or ()
    assert offered.name == "final_result"
    assert offered.parameters["properties"]["population"]["minimum"] == 0  # type: ignore[index,call-overload]
    assert "A city and its population." in offered.description

    plain = await run(agent, ask("thanks"))  # the tool was for that run only
    assert plain.output is None
    assert adapter.requests[1].tools is None
    assert_reconstructed(agent, adapter)
    await agent.aclose()


async def test_a_validation_error_goes_back_to_the_model() -> None:
    adapter = ScriptedAdapter(
        [
            answer({"name": "Paris", "population": -1}, "c1"),
            answer({"name": "Paris", "population": 2100000}, "c2"),
        ]
    )
    agent = make_agent(adapter)
    result = await run(agent, ask("Largest French city?"), output_type=City)

    assert result.output == City(name="Paris", population=2100000)
    feedback = adapter.requests[1].messages[-1]
    assert feedback.content[0].type == "tool-result"
    text = feedback.content[0].content[0].text  # type: ignore[union-attr]
    assert "'population': Input should be greater than or equal to 0" in text
    assert "Call final_result again" in text
    assert_reconstructed(agent, adapter)
    await agent.aclose()


async def test_retries_are_bounded_then_the_run_fails_clearly() -> None:
    bad = [answer({"name": "Paris"}, f"c{i}") for i in range(5)]
    adapter = ScriptedAdapter(bad)
    agent = make_agent(adapter)
    with pytest.raises(OutputValidationError, match="no valid City after 2 attempts") as raised:
        await run(agent, ask("Largest French city?"), output_type=City, output_corrections=1)

    assert len(adapter.requests) == 2
    assert len(raised.value.problems) == 2
    assert "'population': Field required" in raised.value.problems[-1]
    assert agent.session.open_turn is None  # the turn was closed, the log is whole
    assert_reconstructed(agent, adapter)
    await agent.aclose()


async def test_a_text_answer_gets_a_reminder_to_call_the_tool() -> None:
    adapter = ScriptedAdapter(["It is Paris.", answer({"name": "Paris", "population": 1})])
    agent = make_agent(adapter)
    result = await run(agent, ask("Largest French city?"), output_type=City)

    assert result.output == City(name="Paris", population=1)
    reminder = adapter.requests[1].messages[-1]
    assert reminder.role == "user"
    assert reminder.source.kind == "plugin"
    assert_reconstructed(agent, adapter)
    await agent.aclose()


async def test_text_answers_only_fail_after_the_retries() -> None:
    adapter = ScriptedAdapter(["Paris.", "Paris!", "Paris?"])
    agent = make_agent(adapter)
    with pytest.raises(OutputValidationError, match="without calling final_result"):
        await run(agent, ask("Largest French city?"), output_type=City)
    assert len(adapter.requests) == 3  # the answer and two reminders (2 retries)
    await agent.aclose()


async def test_output_type_must_be_a_model_class() -> None:
    agent = make_agent(ScriptedAdapter([]))
    with pytest.raises(TypeError, match="Pydantic model class"):
        await run(agent, ask("x"), output_type=dict)  # type: ignore[type-var]
    assert agent.session.seq == 0
    await agent.aclose()


def test_sync_agent_runs_with_an_output_type() -> None:
    def make() -> AgentLoop:
        return make_agent(ScriptedAdapter([answer({"name": "Oslo", "population": 700000})]))

    with SyncAgent(make) as chat:
        result = chat.run(ask("Capital of Norway?"), output_type=City)
    assert result.output == City(name="Oslo", population=700000)
