"""The pre-step waterfall (SPEC §4.3, reference-behaviour §3): composition order, the
decisions, and what a failure or an empty batch does to the turn."""

from __future__ import annotations

import asyncio

import pytest

from dsh_agent import Enter, PreStep, Reject
from dsh_agent._agent import CallNext
from dsh_llm import LlmError, LlmFailure, create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import ErrorReason, Session
from dsh_session.stores import MemorySessionStore

from .support import AgentFactory, fixed


def turn_ends(agent: object) -> list[object]:
    events = agent.session.events  # type: ignore[attr-defined]
    return [e.data.reason for e in events if e.type == "turn/end"]


async def test_the_first_handler_is_the_outermost(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter(["ok"]))
    order: list[str] = []

    def handler(name: str):  # type: ignore[no-untyped-def]
        async def handle(step: PreStep, call_next: CallNext) -> Enter | Reject:
            order.append(f"{name} in")
            decision = await call_next()
            order.append(f"{name} out")
            return decision

        return handle

    agent.on_pre_step(handler("outer"))
    agent.on_pre_step(handler("inner"))
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    assert order == ["outer in", "inner in", "inner out", "outer out"]


async def test_call_next_with_a_modified_step_reaches_the_default(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter(["ok"]))
    note = create_user_message(content="note", source={"kind": "plugin", "plugin": "notes"})

    async def add_note(step: PreStep, call_next: CallNext) -> Enter | Reject:
        return await call_next(PreStep(step.agent, (*step.messages, note), step.turn, step.step))

    agent.on_pre_step(add_note)
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    entered = [e.data.id for e in agent.session.events if e.type == "user/message"]
    assert entered == ["m1", note.id]


async def test_a_removed_handler_no_longer_runs(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter(["ok"]))

    async def refuse(step: PreStep, call_next: CallNext) -> Enter | Reject:
        return Reject()

    remove = agent.on_pre_step(refuse)
    remove()
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    assert turn_ends(agent)[0].kind == "completed"  # type: ignore[attr-defined]


async def test_a_failing_handler_ends_the_turn_with_an_error_and_drops_the_batch(
    make_agent: AgentFactory,
) -> None:
    adapter = ScriptedAdapter(["never"])
    agent = make_agent(adapter)

    async def broken(step: PreStep, call_next: CallNext) -> Enter | Reject:
        raise ValueError("policy store offline")

    agent.on_pre_step(broken)
    agent.followup(fixed("m1", "hi"))
    queued = fixed("m2", "queued")
    agent.followup(queued)
    await agent.when_idle()

    assert turn_ends(agent) == [
        ErrorReason(error=LlmFailure(message="ValueError: policy store offline", code="UNKNOWN"))
    ]
    types = [e.type for e in agent.session.events]
    assert "step/start" not in types and "user/message" not in types
    assert not any(e.type == "agent/inbox/spliced" and e.data.outcome for e in agent.session.events)
    assert agent.inbox.next_turn == (queued,)  # the driver stopped; queued work waits
    assert adapter.requests == []


async def test_a_handler_raising_an_llm_error_keeps_its_failure_facts(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter(["never"]))
    failure = LlmFailure(message="quota exhausted", code="RATE_LIMIT", status=429)

    async def rate_limited(step: PreStep, call_next: CallNext) -> Enter | Reject:
        raise LlmError("moderation provider refused", failure=failure)

    agent.on_pre_step(rate_limited)
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    assert turn_ends(agent) == [ErrorReason(error=failure)]


async def test_a_handler_returning_something_else_is_a_failure(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter(["never"]))

    async def confused(step: PreStep, call_next: CallNext) -> Enter | Reject:
        return "yes"  # type: ignore[return-value]

    agent.on_pre_step(confused)
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    (reason,) = turn_ends(agent)
    assert isinstance(reason, ErrorReason) and "expected Enter or Reject" in reason.error.message


def test_enter_accepts_only_user_messages() -> None:
    from dsh_llm import create_tool_result_message

    with pytest.raises(TypeError, match=r"Enter.messages\[0\]"):
        Enter([create_tool_result_message(call_id="c1", content="x")])  # type: ignore[list-item]


async def test_entering_nothing_at_the_first_step_completes_the_turn_without_a_step(
    make_agent: AgentFactory,
) -> None:
    adapter = ScriptedAdapter(["never"])
    agent = make_agent(adapter)

    async def drop_all(step: PreStep, call_next: CallNext) -> Enter | Reject:
        return Enter([])

    agent.on_pre_step(drop_all)
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    assert [e.type for e in agent.session.events] == [
        "agent/inbox/spliced",
        "turn/start",
        "agent/inbox/spliced",
        "turn/end",
    ]
    assert turn_ends(agent)[0].kind == "completed"  # type: ignore[attr-defined]
    assert adapter.requests == []


async def test_entering_nothing_after_a_final_answer_closes_the_turn(
    make_agent: AgentFactory,
) -> None:
    gate = asyncio.Event()
    adapter = ScriptedAdapter(["final", "never"])
    agent = make_agent(adapter)

    async def drop_later_steps(step: PreStep, call_next: CallNext) -> Enter | Reject:
        if step.step == 1:
            return await call_next()
        gate.set()
        return Enter([])

    agent.on_pre_step(drop_later_steps)
    agent.followup(fixed("m1", "hi"))
    agent.inject(fixed("i1", "forces another step"))  # pending next-step input
    await agent.when_idle()

    assert gate.is_set()
    steps = [e.data.step for e in agent.session.events if e.type == "step/start"]
    assert steps == [1]  # no step 2 opened
    assert len(adapter.requests) == 1


async def test_entering_nothing_after_a_tool_step_still_continues(
    make_agent: AgentFactory,
) -> None:
    from dsh_agent import tool

    @tool
    async def ping() -> str:
        """Answer pong."""
        return "pong"

    adapter = ScriptedAdapter([reply(tool_calls=[{"call_id": "c1", "name": "ping"}]), "done"])
    agent = make_agent(adapter, tools=[ping])

    async def enter_nothing_later(step: PreStep, call_next: CallNext) -> Enter | Reject:
        return await call_next() if step.step == 1 else Enter([])

    agent.on_pre_step(enter_nothing_later)
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    steps = [e.data.step for e in agent.session.events if e.type == "step/start"]
    assert steps == [1, 2]
    assert len(adapter.requests) == 2


async def test_input_arriving_during_pre_step_waits_for_the_next_boundary(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter(["never"]))
    late = fixed("late", "arrived during pre-step")

    async def refuse_after_steer(step: PreStep, call_next: CallNext) -> Enter | Reject:
        step.agent.steer(late)
        return Reject()

    agent.on_pre_step(refuse_after_steer)
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    assert turn_ends(agent)[0].kind == "blocked"  # type: ignore[attr-defined]
    assert agent.inbox.next_step == (late,)  # survives the rejection


class GatedStore(MemorySessionStore):
    """Holds the flush that follows a ``turn/end`` until the test releases it."""

    def __init__(self) -> None:
        super().__init__()
        self.turn_ended, self.release = asyncio.Event(), asyncio.Event()

    async def flush(self, session: Session) -> None:
        if session.events[-1].type == "turn/end" and not self.release.is_set():
            self.turn_ended.set()
            await self.release.wait()
        await super().flush(session)


async def test_a_followup_sent_as_a_blocked_turn_closes_still_runs(
    make_agent: AgentFactory,
) -> None:
    store = GatedStore()
    agent = make_agent(ScriptedAdapter(["answered"]), store=store)

    async def refuse_first(step: PreStep, call_next: CallNext) -> Enter | Reject:
        return Reject() if step.turn == 1 else await call_next()

    agent.on_pre_step(refuse_first)
    agent.followup(fixed("m1", "refused"))
    await store.turn_ended.wait()

    agent.followup(fixed("m2", "sent while the blocked turn closes"))
    store.release.set()
    await agent.when_idle()

    assert [r.kind for r in turn_ends(agent)] == ["blocked", "completed"]  # type: ignore[attr-defined]
    assert [e.data.id for e in agent.session.events if e.type == "user/message"] == ["m2"]
