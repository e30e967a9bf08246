"""run_sync and SyncAgent: sync code drives an agent on a private loop thread, from a
plain thread or one already running a loop (as in Jupyter), leaking nothing."""

from __future__ import annotations

import asyncio
import gc
import threading

import pytest

from dsh_agent import AgentError, AgentLoop, tool
from dsh_agent.streaming import TextDelta, TurnEnded
from dsh_agent.streaming._sync import SyncAgent, run_sync
from dsh_llm import create_user_message
from dsh_llm.errors import InputError
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


def _factory(*answers: str) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter(list(answers)),
        provider="test",
        model="scripted",
    )


def _open_loops() -> list[asyncio.AbstractEventLoop]:
    gc.collect()
    return [
        o
        for o in gc.get_objects()
        if isinstance(o, asyncio.AbstractEventLoop) and not o.is_closed()
    ]


def test_run_sync_builds_runs_and_closes_leaving_no_thread_or_loop() -> None:
    threads, loops = set(threading.enumerate()), _open_loops()
    built: list[AgentLoop] = []

    def factory() -> AgentLoop:
        built.append(_factory("hello there"))
        return built[0]

    result = run_sync(factory, create_user_message(content="hi", source={"kind": "user"}))

    assert result.final_response == "hello there"
    assert built[0].closed
    assert set(threading.enumerate()) <= threads  # threads of earlier tests may end meanwhile
    assert _open_loops() == loops


async def test_run_sync_works_inside_a_running_loop_as_in_a_notebook() -> None:
    asyncio.get_running_loop()  # this test's own loop is running, like Jupyter's

    async def factory() -> AgentLoop:  # an async factory is awaited on the private loop
        return _factory("from a notebook")

    result = run_sync(factory, create_user_message(content="hi", source={"kind": "user"}))

    assert result.final_response == "from a notebook"


def test_run_sync_with_an_idle_agent_leaves_it_open() -> None:
    agent = _factory("one", "two")
    first = run_sync(agent, create_user_message(content="1", source={"kind": "user"}))
    second = run_sync(agent, create_user_message(content="2", source={"kind": "user"}))
    assert (first.final_response, second.final_response) == ("one", "two")
    assert not agent.closed


def test_run_sync_raises_the_refusal_in_the_callers_thread() -> None:
    with pytest.raises(InputError, match="not int"):
        run_sync(lambda: _factory("x"), 7)  # type: ignore[call-overload]


def _chat() -> None:
    threads, loops = set(threading.enumerate()), _open_loops()
    with SyncAgent(lambda: _factory("first answer", "second answer")) as chat:
        assert chat.run(
            create_user_message(content="1", source={"kind": "user"})
        ).final_response == ("first answer")
        updates = list(chat.stream(create_user_message(content="2", source={"kind": "user"})))
        text = "".join(u.text for u in updates if isinstance(u, TextDelta))
        assert text == "second answer"
        assert isinstance(updates[-2], TurnEnded)
        agent = chat.agent
    assert agent.closed
    assert set(threading.enumerate()) <= threads  # threads of earlier tests may end meanwhile
    assert _open_loops() == loops
    with pytest.raises(AgentError, match="closed"):
        chat.run(create_user_message(content="3", source={"kind": "user"}))


def test_sync_agent_drives_a_chat_and_leaves_nothing_behind() -> None:
    _chat()


async def test_sync_agent_works_inside_a_running_loop() -> None:
    _chat()


def test_leaving_a_sync_stream_early_stops_observing() -> None:
    with SyncAgent(lambda: _factory("a long answer", "another")) as chat:
        for _update in chat.stream(create_user_message(content="1", source={"kind": "user"})):
            break
        assert chat.agent.session._observers == {}
        again = chat.run(create_user_message(content="2", source={"kind": "user"}))
        assert again.final_response == "another"


def test_a_tool_that_calls_its_own_sync_agent_gets_an_error_not_a_deadlock() -> None:
    holder: list[SyncAgent] = []

    @tool
    async def recurse() -> str:
        """Calls the chat it runs in."""
        holder[0].run(create_user_message(content="inner", source={"kind": "user"}))
        return "unreachable"

    def factory() -> AgentLoop:
        calls = reply(tool_calls=[{"name": "recurse", "arguments": {}}])
        return AgentLoop(
            session=Session.create(),
            adapter=ScriptedAdapter([calls, "done"]),
            provider="test",
            model="scripted",
            tools=[recurse],
        )

    with SyncAgent(factory) as chat:
        holder.append(chat)
        result = chat.run(create_user_message(content="go", source={"kind": "user"}))
    outcome = next(e for e in result.events if e.type == "tool/result")
    assert outcome.data.message.content[0].is_error
    assert "own loop" in str(outcome.data.message.content[0].content)
    assert result.final_response == "done"
