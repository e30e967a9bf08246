"""agent.regenerate(): a new answer to the last prompt, the old one shadowed by one
surface replace that cites it, on real stores; refusals write nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dsh_agent import AgentLoop, BranchError, tool
from dsh_llm import LlmFailure
from dsh_llm.testing import FunctionAdapter, ScriptedAdapter, reply
from dsh_session import AssistantMessageEvent, Replace, Session
from dsh_session.stores import SessionStore

from .conftest import open_kind
from .support import (
    agent_over,
    check_requests,
    check_surface,
    ids,
    logged_ids,
    prompt,
    say,
    texts,
)


@tool
async def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


async def test_regenerate_shadows_the_last_answer_and_runs_a_new_turn(
    store: SessionStore, store_kind: str, tmp_path: Path
) -> None:
    session = Session.create()
    adapter = ScriptedAdapter(["first answer", "second answer"])
    agent = agent_over(session, adapter, store=store)
    question = await say(agent, "a question")
    old_answer = session.derive_messages()[1]
    before = session.seq

    agent.regenerate()
    assert agent.status == "running"  # the turn opened before regenerate() returned
    await agent.when_idle()

    history = session.derive_messages()
    assert texts(history) == ["a question", "second answer"]
    assert history[0] is question
    assert old_answer.id not in ids(history)
    assert old_answer.id in logged_ids(session.events)  # the raw log keeps it
    replaces = [e for e in session.events[before:] if isinstance(e.surface_op, Replace)]
    assert len(replaces) == 1
    (tombstone,) = replaces
    assert isinstance(tombstone, AssistantMessageEvent)
    assert tombstone.data.message.content == ()
    answer_seq = session.surface_seq_of(old_answer.id)
    assert answer_seq is None
    old_seq = next(
        e.seq for e in session.events if e.type == "assistant/message" and e.seq < before
    )
    assert tombstone.surface_op == Replace(start=old_seq, end=old_seq)
    assert tombstone.source_event_seqs == (old_seq,)
    # the second request saw the prompt and not the old answer
    assert ids(adapter.requests[1].messages) == [question.id]
    check_requests(session, adapter.requests)
    check_surface(session)
    await agent.aclose()
    await store.close()

    async with open_kind(store_kind, tmp_path) as reopened:
        loaded = await reopened.load(session.id)
    assert ids(loaded.derive_messages()) == ids(history)
    check_requests(loaded, adapter.requests)


async def test_regenerate_shadows_the_whole_tool_exchange() -> None:
    session = Session.create()
    adapter = ScriptedAdapter(
        [
            reply(tool_calls=[{"name": "lookup", "arguments": {"key": "k"}}]),
            "the value is v",
            "fresh answer",
        ]
    )
    agent = agent_over(session, adapter, tools=[lookup])
    question = await say(agent, "look k up")
    exchange = session.derive_messages()[1:]
    assert texts(exchange) == ["call:lookup", "result:value of k", "the value is v"]
    shadowed = [session.surface_seq_of(m.id) for m in exchange]

    agent.regenerate()
    await agent.when_idle()

    history = session.derive_messages()
    assert texts(history) == ["look k up", "fresh answer"]
    assert history[0] is question
    tombstone = next(e for e in session.events if isinstance(e.surface_op, Replace))
    assert tombstone.surface_op == Replace(start=shadowed[0], end=shadowed[-1])
    assert tombstone.source_event_seqs == tuple(shadowed)
    assert ids(adapter.requests[2].messages) == [question.id]
    check_requests(session, adapter.requests)
    check_surface(session)


async def test_regenerate_twice_shadows_the_first_regeneration_too() -> None:
    session = Session.create()
    adapter = ScriptedAdapter(["one", "two", "three", "four"])
    agent = agent_over(session, adapter)
    await say(agent, "earlier")
    await say(agent, "question")
    agent.regenerate()
    await agent.when_idle()
    first = next(e for e in session.events if isinstance(e.surface_op, Replace))
    third_seq = session.surface_seq_of(session.derive_messages()[-1].id)
    agent.regenerate()
    await agent.when_idle()
    assert texts(session.derive_messages()) == ["earlier", "one", "question", "four"]
    second = [e for e in session.events if isinstance(e.surface_op, Replace)][-1]
    # after the prompt, the surface held the first replace and the answer it brought
    assert second.source_event_seqs == (first.seq, third_seq)
    check_requests(session, adapter.requests)
    check_surface(session)


async def test_every_other_id_is_kept_by_a_regenerate() -> None:
    session = Session.create()
    adapter = ScriptedAdapter(["a1", "a2", "a2 again"])
    agent = agent_over(session, adapter)
    await say(agent, "q1")
    await say(agent, "q2")
    before = session.derive_messages()
    agent.regenerate()
    await agent.when_idle()
    after = session.derive_messages()
    assert [m for m in after[:3]] == list(before[:3])
    assert all(a is b for a, b in zip(after[:3], before[:3], strict=True))
    assert after[3].id != before[3].id
    assert texts(after) == ["q1", "a1", "q2", "a2 again"]


async def test_regenerate_of_a_prompt_whose_turn_failed_just_runs_a_turn() -> None:
    session = Session.create()
    adapter = ScriptedAdapter([LlmFailure(message="quota spent", code="QUOTA"), "at last"])
    agent = agent_over(session, adapter)
    await say(agent, "question")
    assert texts(session.derive_messages()) == ["question"]
    before = session.seq
    agent.regenerate()
    await agent.when_idle()
    assert texts(session.derive_messages()) == ["question", "at last"]
    assert not any(isinstance(e.surface_op, Replace) for e in session.events[before:])
    check_requests(session, adapter.requests)


async def test_regenerate_without_a_prompt_is_refused_and_writes_nothing() -> None:
    session = Session.create()
    agent = agent_over(session, ScriptedAdapter([]))
    with pytest.raises(BranchError, match="nothing to regenerate"):
        agent.regenerate()
    assert session.seq == 0
    assert agent.status == "idle"


async def test_regenerate_while_a_turn_runs_is_refused_and_writes_nothing() -> None:
    session = Session.create()
    release = asyncio.Event()

    async def answer(_: object) -> str:
        await release.wait()
        return "slow"

    agent = agent_over(session, FunctionAdapter(answer))
    agent.followup(prompt("q"))
    seq = session.seq
    with pytest.raises(BranchError, match="running a turn"):
        agent.regenerate()
    assert session.seq == seq
    release.set()
    await agent.when_idle()
    await agent.aclose()


async def test_regenerate_with_input_pending_is_refused() -> None:
    session = Session.create()
    agent = agent_over(session, ScriptedAdapter(["a"]))
    await say(agent, "q")
    agent.inject(prompt("context for later"))
    seq = session.seq
    with pytest.raises(BranchError, match="pending"):
        agent.regenerate()
    assert session.seq == seq


async def test_regenerate_on_a_closed_agent_is_refused() -> None:
    session = Session.create()
    agent = agent_over(session, ScriptedAdapter(["a"]))
    await say(agent, "q")
    await agent.aclose()
    from dsh_agent import AgentClosedError

    with pytest.raises(AgentClosedError):
        agent.regenerate()


def test_regenerate_needs_a_running_loop() -> None:
    session = Session.create()
    agent: AgentLoop

    async def setup() -> AgentLoop:
        made = agent_over(session, ScriptedAdapter(["a"]))
        await say(made, "q")
        return made

    agent = asyncio.run(setup())
    seq = session.seq
    with pytest.raises(RuntimeError):
        agent.regenerate()
    assert session.seq == seq
