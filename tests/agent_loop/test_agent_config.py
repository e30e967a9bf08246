"""AgentConfig: a loop's options as one frozen value, built once by ``AgentLoop(...)``,
taken as it is by ``AgentLoop.from_config``, and what ``edit()`` builds its branch from."""

from __future__ import annotations

import dataclasses

import pytest

from dsh_agent import (
    AgentConfig,
    AgentLoop,
    CallNext,
    ModelSettings,
    PreStep,
    PreStepDecision,
    tool,
)
from dsh_agent import run as run_agent
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session

from .support import prompt


@tool
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


async def passing(step: PreStep, call_next: CallNext) -> PreStepDecision:
    return await call_next()


def test_the_keywords_become_one_frozen_config() -> None:
    adapter = ScriptedAdapter([])
    settings = ModelSettings(temperature=0.2, max_tokens=50)
    agent = AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="p",
        model="m",
        system="s",
        tools=[add],
        model_settings=settings,
        retry=None,
        pre_step=[passing],
    )
    config = agent.config
    assert config == AgentConfig(
        adapter=adapter,
        provider="p",
        model="m",
        system="s",
        tools=(add,),
        model_settings=settings,
        retry=None,
        pre_step=(passing,),
    )
    assert config.tools == (add,) and config.pre_step == (passing,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.model = "other"  # type: ignore[misc]


async def test_a_loop_from_a_config_sends_what_the_keyword_loop_sends() -> None:
    settings = ModelSettings(temperature=0.5, stop=("END",))
    by_keywords = ScriptedAdapter([reply(text="ok")])
    await run_agent(
        AgentLoop(
            session=Session.create(),
            adapter=by_keywords,
            provider="p",
            model="m",
            tools=[add],
            model_settings=settings,
        ),
        prompt("hi"),
    )
    from_config = ScriptedAdapter([reply(text="ok")])
    config = AgentConfig(
        adapter=from_config, provider="p", model="m", tools=[add], model_settings=settings
    )
    agent = AgentLoop.from_config(session=Session.create(), config=config)
    assert agent.config is config
    await run_agent(agent, prompt("hi"))
    sent, again = by_keywords.requests[0], from_config.requests[0]
    assert (sent.temperature, sent.stop, sent.tools) == (again.temperature, again.stop, again.tools)
    assert again.temperature == 0.5


async def test_an_edit_branch_reuses_the_config_with_the_handlers_added_since() -> None:
    adapter = ScriptedAdapter([reply(text="first"), reply(text="edited")])
    agent = AgentLoop(session=Session.create(), adapter=adapter, provider="p", model="m")
    agent.on_pre_step(passing)
    asked = prompt("hello")
    await run_agent(agent, asked)
    branch = await agent.edit(asked.id, "hello again")
    await branch.when_idle()
    assert isinstance(branch, AgentLoop)
    assert branch.config == dataclasses.replace(agent.config, pre_step=(passing,))
    assert agent.config.pre_step == ()
    await branch.aclose()
    await agent.aclose()
