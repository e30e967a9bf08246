"""await agent.edit(id, content): a new prompt with a new id naming the old one, on a
fork cut before the old prompt's turn; the original branch stays intact and loadable,
and every other id is the same on both branches."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from pathlib import Path

import pytest

from dsh_agent import BranchError, CallNext, PreStep, PreStepDecision, tool
from dsh_llm import UserSource, create_user_message
from dsh_llm.testing import FunctionAdapter, Response, ScriptedAdapter, reply
from dsh_session import Session
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


async def test_edit_of_the_last_prompt_continues_on_a_fork(
    store: SessionStore, store_kind: str, tmp_path: Path
) -> None:
    session = Session.create()
    adapter = ScriptedAdapter(["a1", "a2", "a2 edited"])
    agent = agent_over(session, adapter, store=store)
    await say(agent, "q1")
    q2 = await say(agent, "q2")
    original_events = tuple(session.events)
    original_history = session.derive_messages()

    branch = await agent.edit(q2.id, "q2, said better")
    assert branch.status == "running"  # the edited turn started before edit() returned
    await branch.when_idle()

    edited = branch.session.derive_messages()[2]
    assert texts(branch.session.derive_messages()) == ["q1", "a1", "q2, said better", "a2 edited"]
    assert edited.id not in logged_ids(original_events)
    assert edited.source == UserSource(edit_of=q2.id)
    # every other id is kept, as the very same objects
    assert all(
        a is b
        for a, b in zip(branch.session.derive_messages()[:2], original_history[:2], strict=True)
    )
    # the original branch is untouched
    assert tuple(session.events) == original_events
    assert agent.session is session
    header = branch.session.header
    assert header.parent_session == session.id
    seed = header.seed_length or 0
    assert branch.session.events[:seed] == original_events[:seed]
    assert original_events[seed].type == "turn/start"  # cut right before q2's turn
    check_surface(session)
    check_surface(branch.session)
    check_requests(session, adapter.requests[:2])
    check_requests(branch.session, [adapter.requests[0], adapter.requests[2]])
    await branch.aclose()
    await agent.aclose()
    await store.close()

    async with open_kind(store_kind, tmp_path) as reopened:
        loaded_original = await reopened.load(session.id)
        loaded_branch = await reopened.load(branch.id)
    assert ids(loaded_original.derive_messages()) == ids(original_history)
    assert ids(loaded_branch.derive_messages()) == ids(branch.session.derive_messages())
    assert loaded_branch.header.parent_session == session.id
    check_requests(loaded_original, adapter.requests[:2])
    check_requests(loaded_branch, [adapter.requests[0], adapter.requests[2]])


async def test_edit_of_an_earlier_prompt_drops_what_came_after_it_on_the_branch() -> None:
    session = Session.create()
    adapter = ScriptedAdapter(
        [
            "a1",
            reply(tool_calls=[{"name": "lookup", "arguments": {"key": "k"}}]),
            "a2",
            "a3",
            "a1 edited",
        ]
    )
    agent = agent_over(session, adapter, tools=[lookup])
    q1 = await say(agent, "q1")
    await say(agent, "q2")
    await say(agent, "q3")
    branch = await agent.edit(q1.id, "q1 edited")
    await branch.when_idle()
    assert texts(branch.session.derive_messages()) == ["q1 edited", "a1 edited"]
    assert texts(session.derive_messages())[:3] == ["q1", "a1", "q2"]
    assert ids(adapter.requests[4].messages) == ids(branch.session.derive_messages()[:1])
    check_requests(branch.session, adapter.requests[4:])
    check_requests(session, adapter.requests[:4])
    check_surface(branch.session)


async def test_an_edited_branch_can_be_edited_and_regenerated_again() -> None:
    session = Session.create()
    adapter = ScriptedAdapter(["a", "b", "c", "d"])
    agent = agent_over(session, adapter)
    q = await say(agent, "q")
    first = await agent.edit(q.id, "q'")
    await first.when_idle()
    edited = first.session.derive_messages()[0]
    second = await first.edit(edited.id, "q''")
    await second.when_idle()
    second.regenerate()
    await second.when_idle()
    history = second.session.derive_messages()
    assert texts(history) == ["q''", "d"]
    assert history[0].source == UserSource(edit_of=edited.id)
    assert second.session.header.parent_session == first.id
    for branch in (agent, first, second):
        check_surface(branch.session)
    check_requests(second.session, adapter.requests[2:])


async def test_messages_that_entered_the_step_before_the_prompt_enter_again() -> None:
    session = Session.create()
    agent = agent_over(session, ScriptedAdapter(["a0", "a2", "a2 edited"]))
    await say(agent, "q0")
    context = create_user_message(content="ctx", source={"kind": "plugin", "plugin": "p"})
    agent.inject(context)  # idle: waits for the next turn, which q2 starts
    q2 = await say(agent, "q2")
    assert texts(session.derive_messages()) == ["q0", "a0", "ctx", "q2", "a2"]
    branch = await agent.edit(q2.id, "q2 edited")
    await branch.when_idle()
    history = branch.session.derive_messages()
    assert texts(history) == ["q0", "a0", "ctx", "q2 edited", "a2 edited"]
    assert history[2] is context  # the same message, its id kept
    check_surface(branch.session)


async def test_the_pre_step_handlers_come_along_to_the_branch() -> None:
    session = Session.create()
    agent = agent_over(session, ScriptedAdapter(["a", "b"]))
    seen: list[int] = []

    async def handler(step: PreStep, call_next: CallNext) -> PreStepDecision:
        seen.append(step.step)
        return await call_next()

    agent.on_pre_step(handler)
    q = await say(agent, "q")
    branch = await agent.edit(q.id, "q edited")
    await branch.when_idle()
    assert seen == [1, 1]


async def test_edit_of_the_first_prompt_of_a_session_that_began_with_its_turn() -> None:
    session = Session.create()
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    q = prompt("imported")
    session.append("user/message", q)
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    adapter = ScriptedAdapter(["fresh"])
    agent = agent_over(session, adapter, check_requests=False)
    branch = await agent.edit(q.id, "edited")
    await branch.when_idle()
    assert branch.session.header.seed_length == 0
    assert branch.session.header.parent_session == session.id
    assert texts(branch.session.derive_messages()) == ["edited", "fresh"]
    check_requests(branch.session, adapter.requests)


# --- refusals write nothing -----------------------------------------------------------------


async def refused(
    store: SessionStore | None, session: Session, edit: Awaitable[object], match: str
) -> None:
    seq = session.seq
    known = [h.id for h in await store.list_sessions()] if store is not None else []
    with pytest.raises(BranchError, match=match):
        await edit
    assert session.seq == seq
    if store is not None:
        assert [h.id for h in await store.list_sessions()] == known


async def test_edits_of_what_is_not_a_prompt_are_refused(store: SessionStore) -> None:
    session = Session.create()
    adapter = ScriptedAdapter([reply(tool_calls=[{"name": "lookup", "arguments": {}}]), "done"])
    agent = agent_over(session, adapter, tools=[lookup], store=store)
    await say(agent, "q")
    agent.inject(create_user_message(content="ctx", source={"kind": "plugin", "plugin": "p"}))
    agent.followup(prompt("q2"))
    await agent.when_idle()
    call, result, answer = session.derive_messages()[1:4]
    ctx = session.derive_messages()[4]
    await refused(store, session, agent.edit(call.id, "x"), "is an assistant message")
    await refused(store, session, agent.edit(answer.id, "x"), "is an assistant message")
    await refused(store, session, agent.edit(result.id, "x"), "is a tool result")
    await refused(store, session, agent.edit(ctx.id, "x"), "not a human prompt")
    await refused(store, session, agent.edit("no-such-id", "x"), "not in the history")
    await agent.aclose()


async def test_edit_of_a_shadowed_prompt_is_refused() -> None:
    session = Session.create()
    agent = agent_over(session, ScriptedAdapter(["a"]))
    q = await say(agent, "q")
    summary = create_user_message(content="summary", source={"kind": "plugin", "plugin": "c"})
    nodes = session.surface_seqs()
    session.append(
        "user/message",
        summary,
        surface_op={"op": "replace", "start": nodes[0], "end": nodes[-1]},
        source_event_seqs=nodes,
    )
    await refused(None, session, agent.edit(q.id, "x"), "not in the history")


async def test_edit_of_a_steer_is_refused() -> None:
    session = Session.create()
    release = asyncio.Event()
    answers: Iterator[Response] = iter(
        [reply(tool_calls=[{"name": "lookup", "arguments": {}}]), "done"]
    )

    async def answer(_: object) -> Response:
        await release.wait()
        return next(answers)

    agent = agent_over(session, FunctionAdapter(answer), tools=[lookup])
    agent.followup(prompt("q"))
    steer = prompt("steer")
    agent.steer(steer)
    release.set()
    await agent.when_idle()
    assert "steer" in texts(session.derive_messages())
    await refused(None, session, agent.edit(steer.id, "x"), "steered a running turn")


async def test_edit_while_a_turn_runs_is_refused() -> None:
    session = Session.create()
    release = asyncio.Event()

    async def answer(_: object) -> str:
        await release.wait()
        return "slow"

    agent = agent_over(session, FunctionAdapter(answer))
    q = prompt("q")
    agent.followup(q)
    await refused(None, session, agent.edit(q.id, "x"), "running a turn")
    release.set()
    await agent.when_idle()


async def test_edit_to_empty_content_is_refused_before_any_fork(store: SessionStore) -> None:
    session = Session.create()
    agent = agent_over(session, ScriptedAdapter(["a"]), store=store)
    q = await say(agent, "q")
    known = [h.id for h in await store.list_sessions()]
    with pytest.raises(Exception, match="content"):
        await agent.edit(q.id, [{"type": "nonsense"}])
    assert [h.id for h in await store.list_sessions()] == known
    await agent.aclose()
