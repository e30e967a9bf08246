"""A string (or content blocks) is a prompt where a producer is involved (issue 27,
item 1): ``run``, ``run_sync``, ``SyncAgent.run``, ``run_stream`` and the streams
create the user message at that boundary with ``create_user_message``, and the
result names the message delivered (``RunResult.message_id``). Anything else is
refused with a dsh error naming its type, before anything is written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dsh_agent import AgentLoop, MessageQueued, RunResult, SyncAgent, run, run_sync
from dsh_agent.streaming import run_stream
from dsh_llm import (
    AssistantMessage,
    TextBlock,
    UserMessage,
    UserSource,
    create_assistant_message,
    create_user_message,
)
from dsh_llm.errors import DshError, InputError
from dsh_llm.testing import ScriptedAdapter
from dsh_session import Session
from dsh_session.events import UserMessageEvent


def _agent(adapter: ScriptedAdapter) -> AgentLoop:
    return AgentLoop(session=Session.create(), adapter=adapter, provider="test", model="test-model")


def _delivered(agent: AgentLoop) -> UserMessage:
    [event] = [e for e in agent.session.events if isinstance(e, UserMessageEvent)]
    return event.data


def _check(result: RunResult, agent: AgentLoop, adapter: ScriptedAdapter, text: str) -> None:
    logged = _delivered(agent)
    assert result.message_id == logged.id
    assert adapter.requests[0].messages[0].id == logged.id
    assert logged.content == (TextBlock(text=text),)
    assert logged.source == UserSource(kind="user")
    assert result.final_response == "answer"


async def test_run_takes_a_string_and_names_the_message_it_created() -> None:
    adapter = ScriptedAdapter(["answer"])
    agent = _agent(adapter)

    result = await run(agent, "hello")

    _check(result, agent, adapter, "hello")
    await agent.aclose()


async def test_run_takes_content_blocks() -> None:
    adapter = ScriptedAdapter(["answer"])
    agent = _agent(adapter)

    result = await run(agent, [TextBlock(text="one"), {"type": "text", "text": "two"}])

    logged = _delivered(agent)
    assert result.message_id == logged.id
    assert logged.content == (TextBlock(text="one"), TextBlock(text="two"))
    assert logged.source == UserSource(kind="user")
    await agent.aclose()


async def test_run_with_a_message_names_that_message() -> None:
    adapter = ScriptedAdapter(["answer"])
    agent = _agent(adapter)
    question = create_user_message("hello")

    result = await run(agent, question)

    assert result.message_id == question.id
    assert _delivered(agent) is question
    await agent.aclose()


def test_run_sync_takes_a_string() -> None:
    adapter = ScriptedAdapter(["answer"])
    agent = _agent(adapter)

    result = run_sync(agent, "hello")

    _check(result, agent, adapter, "hello")


def test_run_sync_with_a_factory_takes_a_string() -> None:
    adapter = ScriptedAdapter(["answer"])
    built: list[AgentLoop] = []

    def factory() -> AgentLoop:
        built.append(_agent(adapter))
        return built[0]

    result = run_sync(factory, "hello")

    _check(result, built[0], adapter, "hello")


def test_sync_agent_run_and_stream_take_a_string() -> None:
    adapter = ScriptedAdapter(["answer", "second"])
    built: list[AgentLoop] = []

    def factory() -> AgentLoop:
        built.append(_agent(adapter))
        return built[0]

    with SyncAgent(factory) as chat:
        result = chat.run("hello")
        _check(result, built[0], adapter, "hello")
        updates = list(chat.stream("again"))

    queued = [u for u in updates if isinstance(u, MessageQueued)]
    assert [u.message.content for u in queued] == [(TextBlock(text="again"),)]
    assert adapter.requests[1].messages[-1].id == queued[0].message_id


@pytest.mark.parametrize("how", ["run_stream", "agent.stream"])
async def test_the_streams_take_a_string(how: str) -> None:
    adapter = ScriptedAdapter(["answer"])
    agent = _agent(adapter)
    start: Callable[..., Any] = run_stream if how == "run_stream" else _method_stream

    updates = [u async for u in start(agent, "hello")]

    logged = _delivered(agent)
    assert logged.content == (TextBlock(text="hello"),)
    assert adapter.requests[0].messages[0].id == logged.id
    assert any(getattr(u, "message_id", None) == logged.id for u in updates)
    await agent.aclose()


def _method_stream(agent: AgentLoop, prompt: str) -> Any:
    return agent.stream(prompt)


def _assistant() -> AssistantMessage:
    return create_assistant_message(content="hi", source={"provider": "p", "model": "m"})


@pytest.mark.parametrize(
    ("prompt", "named"),
    [(42, "int"), ({"type": "text", "text": "hi"}, "dict"), (None, "NoneType"), (b"hi", "bytes")],
)
async def test_run_refuses_another_type_naming_it_and_writes_nothing(
    prompt: Any, named: str
) -> None:
    agent = _agent(ScriptedAdapter(["unused"]))

    with pytest.raises(InputError, match=rf"run\(\) takes a prompt .* not {named}$") as raised:
        await run(agent, prompt)

    assert isinstance(raised.value, DshError)
    assert raised.value.field == "message"
    assert agent.session.seq == 0
    await agent.aclose()


async def test_run_refuses_an_assistant_message() -> None:
    agent = _agent(ScriptedAdapter(["unused"]))

    with pytest.raises(InputError, match="not AssistantMessage"):
        await run(agent, _assistant())  # type: ignore[call-overload]

    assert agent.session.seq == 0
    await agent.aclose()


async def test_the_stream_refuses_another_type_and_observes_nothing() -> None:
    agent = _agent(ScriptedAdapter(["unused"]))

    with pytest.raises(InputError, match=r"stream\(\) takes a prompt .* not int$"):
        agent.stream(42)  # type: ignore[arg-type]

    assert agent._observers == []
    assert agent.session.seq == 0
    await agent.aclose()


def test_run_sync_refuses_another_type_before_building_the_agent() -> None:
    built: list[AgentLoop] = []

    def factory() -> AgentLoop:
        built.append(_agent(ScriptedAdapter(["unused"])))
        return built[0]

    with pytest.raises(InputError, match=r"run_sync\(\) takes a prompt .* not float$"):
        run_sync(factory, 1.5)  # type: ignore[call-overload]

    assert built == []


def test_create_user_message_takes_content_positionally_with_the_user_as_source() -> None:
    message = create_user_message("hello")

    assert message.content == (TextBlock(text="hello"),)
    assert message.source == UserSource(kind="user")
    assert message.source is create_user_message("again").source
    assert create_user_message("x", source={"kind": "plugin", "plugin": "p"}).source.kind == (
        "plugin"
    )
