"""Model settings on the loop and per run: carried in the request header, sent to the
adapter, and reproduced by ``reconstruct_requests`` from the log alone."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from dsh_agent import AgentError, AgentLoop, ModelSettings, run
from dsh_agent.requests import diff_requests, reconstruct_requests
from dsh_llm import UserMessage, create_user_message
from dsh_llm.testing import ScriptedAdapter
from dsh_session import Session


def ask(text: str) -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def make_agent(adapter: ScriptedAdapter) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="test",
        model="test-model",
        model_settings=ModelSettings(
            temperature=0.2,
            top_p=0.9,
            stop=("END",),
            reasoning_effort="high",
            max_tokens=100,
        ),
        check_requests=True,
    )


def assert_reconstructed(agent: AgentLoop, adapter: ScriptedAdapter) -> None:
    rebuilt = reconstruct_requests(agent.session.events)
    assert len(rebuilt) == len(adapter.requests)
    for live, again in zip(adapter.requests, rebuilt, strict=True):
        assert diff_requests(live, again) == []


async def test_loop_settings_reach_the_request_and_the_header() -> None:
    adapter = ScriptedAdapter(["ok"])
    agent = make_agent(adapter)
    await run(agent, ask("hi"))

    [request] = adapter.requests
    assert (request.temperature, request.top_p, request.stop) == (0.2, 0.9, ("END",))
    assert (request.reasoning_effort, request.max_tokens) == ("high", 100)
    [header] = [e for e in agent.session.events if e.type == "request/header"]
    wire = json.loads(header.model_dump_json(by_alias=True))["data"]["header"]["config"]
    assert wire["topP"] == 0.9 and wire["reasoningEffort"] == "high"
    assert_reconstructed(agent, adapter)
    await agent.aclose()


async def test_per_run_settings_apply_to_that_run_only() -> None:
    adapter = ScriptedAdapter(["one", "two", "three"])
    agent = make_agent(adapter)
    await run(agent, ask("first"))
    await run(agent, ask("second"), settings=ModelSettings(temperature=1.0, stop=("STOP",)))
    await run(agent, ask("third"))

    sent = [(r.temperature, r.top_p, r.stop) for r in adapter.requests]
    assert sent == [(0.2, 0.9, ("END",)), (1.0, 0.9, ("STOP",)), (0.2, 0.9, ("END",))]
    reasons = [e.data.reason for e in agent.session.events if e.type == "request/header"]
    assert reasons == ["initial", "change", "change"]
    assert_reconstructed(agent, adapter)
    await agent.aclose()


def test_a_bad_setting_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="temperature"):
        AgentLoop(
            session=Session.create(),
            adapter=ScriptedAdapter([]),
            provider="test",
            model="m",
            model_settings=ModelSettings(temperature=-1),
        )
    with pytest.raises(TypeError, match="stop"):
        ModelSettings(stop="END")  # type: ignore[arg-type]


async def test_a_bad_per_run_setting_changes_nothing() -> None:
    adapter = ScriptedAdapter(["ok"])
    agent = make_agent(adapter)
    before = agent.session.seq
    with pytest.raises(ValidationError, match=r"top_p|topP"):
        await run(agent, ask("hi"), settings=ModelSettings(top_p=2.0))
    assert agent.session.seq == before
    await run(agent, ask("hi"))
    assert adapter.requests[0].top_p == 0.9
    await agent.aclose()


async def test_per_run_settings_need_an_idle_agent() -> None:
    adapter = ScriptedAdapter(["ok", "ok"], delay=0.01)
    agent = make_agent(adapter)
    agent.followup(ask("busy"))
    with pytest.raises(AgentError, match="running"):
        await run(agent, ask("hi"), settings=ModelSettings(temperature=1.0))
    await agent.when_idle()
    await agent.aclose()
