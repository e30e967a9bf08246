"""run_sync and SyncAgent.run take exactly what async run() takes: settings, a typed
output_type, output_corrections, raise_on_error; failures reach the sync caller."""

from __future__ import annotations

from typing import assert_type

import pytest
from pydantic import BaseModel

from dsh_agent import AgentLoop, ModelSettings, OutputValidationError, RunResult, TurnFailed
from dsh_agent.streaming._sync import SyncAgent, run_sync
from dsh_llm import UserMessage, create_user_message
from dsh_llm._failure import LlmFailure
from dsh_llm.testing import Response, ScriptedAdapter, reply
from dsh_session import Session


class Forecast(BaseModel):
    city: str
    celsius: int


def ask(text: str) -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def forecast_call(arguments: dict[str, object]) -> Response:
    return reply(tool_calls=[{"name": "final_result", "arguments": arguments}])


def make_agent(adapter: ScriptedAdapter) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="test",
        model="scripted",
        retry=None,
    )


FAILURE = LlmFailure(code="SERVER", message="the provider broke")


def test_run_sync_validates_a_typed_output_with_the_runs_settings() -> None:
    adapter = ScriptedAdapter([forecast_call({"city": "Oslo", "celsius": -3})])

    result = run_sync(
        make_agent(adapter),
        ask("Weather in Oslo?"),
        output_type=Forecast,
        settings=ModelSettings(temperature=0.2),
    )

    assert_type(result, RunResult[Forecast])
    assert_type(result.output, Forecast)
    assert result.output == Forecast(city="Oslo", celsius=-3)
    [request] = adapter.requests
    assert request.temperature == 0.2
    assert [t.name for t in request.tools or ()] == ["final_result"]


def test_run_sync_gives_up_after_output_corrections() -> None:
    bad = forecast_call({"city": "Oslo", "celsius": "cold"})
    adapter = ScriptedAdapter([bad, bad])

    with pytest.raises(OutputValidationError):
        run_sync(make_agent(adapter), ask("Weather?"), output_type=Forecast, output_corrections=1)
    assert len(adapter.requests) == 2


def test_a_failed_turn_raises_turn_failed_in_the_sync_caller() -> None:
    with pytest.raises(TurnFailed) as raised:
        run_sync(lambda: make_agent(ScriptedAdapter([FAILURE])), ask("go"))
    assert raised.value.failure.message == "the provider broke"
    assert raised.value.result.finish_reason == "error"


def test_raise_on_error_false_returns_the_failure_as_a_value() -> None:
    result = run_sync(make_agent(ScriptedAdapter([FAILURE])), ask("go"), raise_on_error=False)
    assert_type(result, RunResult[None])
    assert result.finish_reason == "error"
    assert result.failure is not None and result.failure.code == "SERVER"


def test_sync_agent_run_takes_the_same_options() -> None:
    adapter = ScriptedAdapter([FAILURE, forecast_call({"city": "Rome", "celsius": 21})])
    with SyncAgent(lambda: make_agent(adapter)) as chat:
        with pytest.raises(TurnFailed):
            chat.run(ask("first"))
        failed = chat.run(ask("again"), raise_on_error=False, output_type=Forecast)
        assert_type(failed.output, Forecast)
    assert failed.output == Forecast(city="Rome", celsius=21)
