"""No path puts one message id twice on the surface: deliveries of a delivered message
are refused synchronously and write nothing, ``Session.append`` refuses, and fork,
regenerate and edit keep every id once, also over random sequences of operations."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_agent import AgentLoop, BranchError, InboxError, run, tool
from dsh_llm import GenerateRequest, UserMessage, create_assistant_message
from dsh_llm.testing import FunctionAdapter, Response, ScriptedAdapter, reply
from dsh_session import Session, SessionValidationError, TurnEndEvent

from .support import agent_over, check_surface, ids, prompt, say, texts

Delivery = Callable[[AgentLoop, UserMessage], object]

DELIVERIES: dict[str, Delivery] = {
    "followup": lambda agent, message: agent.followup(message),
    "steer": lambda agent, message: agent.steer(message),
    "inject": lambda agent, message: agent.inject(message),
    "send next-turn, no wake": lambda agent, message: agent.send(message, "next-turn", False),
    "send next-step, wake": lambda agent, message: agent.send(message, "next-step", True),
    "stream": lambda agent, message: agent.stream(message),
}


@pytest.mark.parametrize("path", sorted(DELIVERIES))
async def test_delivering_a_delivered_message_again_is_refused_and_writes_nothing(
    path: str,
) -> None:
    session = Session.create()
    agent = agent_over(session, ScriptedAdapter(["a", "b"]))
    delivered = await say(agent, "q")
    seq, pending = session.seq, agent.inbox.has_pending
    with pytest.raises(InboxError, match="already in the history") as refused:
        DELIVERIES[path](agent, delivered)
    assert refused.value.message_id == delivered.id
    assert session.seq == seq
    assert agent.inbox.has_pending == pending
    assert agent.status == "idle"


async def test_run_of_a_delivered_message_is_refused_before_anything_is_written() -> None:
    session = Session.create()
    agent = agent_over(session, ScriptedAdapter(["a"]))
    delivered = await say(agent, "q")
    seq = session.seq
    with pytest.raises(InboxError):
        await run(agent, delivered)
    assert session.seq == seq


async def test_steering_a_running_turn_with_its_own_prompt_is_refused() -> None:
    session = Session.create()
    release = asyncio.Event()

    async def answer(_: GenerateRequest) -> str:
        await release.wait()
        return "a"

    agent = agent_over(session, FunctionAdapter(answer))
    question = prompt("q")
    agent.followup(question)
    while session.surface_seq_of(question.id) is None:
        await asyncio.sleep(0)
    seq = session.seq
    with pytest.raises(InboxError):
        agent.steer(question)
    assert session.seq == seq
    release.set()
    await agent.when_idle()
    check_surface(session)


def test_session_append_refuses_every_surface_type_reusing_an_id() -> None:
    session = Session.create()
    question = prompt("q")
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("user/message", question)
    answer = create_assistant_message(content="a", source={"provider": "p", "model": "m"})
    session.append("assistant/message", {"turn": 1, "step": 1, "message": answer})
    seq = session.seq
    with pytest.raises(SessionValidationError, match="already holds it"):
        session.append("user/message", question)
    with pytest.raises(SessionValidationError, match="already holds it"):
        session.append("assistant/message", {"turn": 1, "step": 1, "message": answer})
    assert session.seq == seq


async def test_a_fork_keeps_every_id_and_refuses_what_its_seed_delivered() -> None:
    session = Session.create()
    adapter = ScriptedAdapter(["a1", "a2", "b"])
    agent = agent_over(session, adapter)
    q1 = await say(agent, "q1")
    boundary = session.seq - 1
    q2 = await say(agent, "q2")
    child = session.fork(boundary)
    assert ids(child.derive_messages()) == ids(session.derive_messages())[:2]
    branch = agent_over(child, adapter)
    with pytest.raises(InboxError):
        branch.followup(q1)
    branch.followup(q2)  # it never reached this branch's surface
    await branch.when_idle()
    check_surface(child)
    check_surface(session)


async def test_after_regenerate_and_edit_the_prompt_is_still_once_and_refused_again() -> None:
    session = Session.create()
    agent = agent_over(session, ScriptedAdapter(["a", "b", "c"]))
    question = await say(agent, "q")
    agent.regenerate()
    await agent.when_idle()
    assert ids(session.derive_messages()).count(question.id) == 1
    with pytest.raises(InboxError):
        agent.followup(question)
    branch = await agent.edit(question.id, "q edited")
    await branch.when_idle()
    edited = branch.session.derive_messages()[0]
    assert isinstance(edited, UserMessage)
    with pytest.raises(InboxError):
        branch.followup(edited)
    check_surface(session)
    check_surface(branch.session)


# --- random sequences of operations --------------------------------------------------------


@tool
async def echo(text: str) -> str:
    """Say it back."""
    return text


def model(request: GenerateRequest) -> Response:
    """Calls the tool once for a prompt that asks for it, else answers in text."""
    last = texts(request.messages[-1:])[0]
    if last.startswith("tool"):
        return reply(tool_calls=[{"name": "echo", "arguments": {"text": last}}])
    return f"answer {len(request.messages)}"


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["say", "say tool", "resend", "regenerate", "edit", "fork"]),
        st.integers(min_value=0, max_value=50),
    ),
    max_size=8,
)


async def play(operations: list[tuple[str, int]]) -> None:
    agent = agent_over(Session.create(), FunctionAdapter(model), tools=[echo])
    sent: list[UserMessage] = []
    try:
        for name, pick in operations:
            session = agent.session
            history = session.derive_messages()
            prompts = [m for m in history if isinstance(m, UserMessage) and m.source.kind == "user"]
            seq = session.seq
            if name.startswith("say"):
                sent.append(await say(agent, f"{'tool' if name == 'say tool' else 'q'} {pick}"))
            elif name == "resend" and sent:
                message = sent[pick % len(sent)]
                if session.surface_seq_of(message.id) is not None:
                    with pytest.raises(InboxError):
                        agent.followup(message)
                    assert session.seq == seq
                else:
                    agent.followup(message)
                    await agent.when_idle()
            elif name == "regenerate":
                if prompts:
                    agent.regenerate()
                    await agent.when_idle()
                else:
                    with pytest.raises(BranchError):
                        agent.regenerate()
                    assert session.seq == seq
            elif name == "edit" and prompts:
                branch = await agent.edit(prompts[pick % len(prompts)].id, f"edit {pick}")
                await branch.when_idle()
                await agent.aclose()
                agent = branch
            elif name == "fork" and session.seq:
                await agent.aclose()
                agent = agent_over(session.fork(), FunctionAdapter(model), tools=[echo])
            check_surface(agent.session)
            ends = [e for e in agent.session.events if isinstance(e, TurnEndEvent)]
            # check_requests=True: a live request that its log does not rebuild fails the turn
            assert all(e.data.reason.kind == "completed" for e in ends)
    finally:
        await agent.aclose()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPERATIONS)
def test_random_operations_keep_every_id_once_on_the_surface(
    operations: list[tuple[str, int]],
) -> None:
    asyncio.run(play(operations))
