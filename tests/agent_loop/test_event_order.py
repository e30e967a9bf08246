"""The exact order of durable events and live notifications, scenario by scenario
(reference-behaviour §1 (a)–(g))."""

from __future__ import annotations

import asyncio
from typing import Any

from dsh_agent import Enter, PreStep, Reject, ToolOutput, tool
from dsh_agent._agent import CallNext
from dsh_llm import GenerateRequest, TextBlock, create_user_message
from dsh_llm.testing import FunctionAdapter, ScriptedAdapter, reply

from .support import AgentFactory, Recorder, fixed

# The chunks ScriptedAdapter streams for a two-word text: block-start, two word
# deltas, block-end, usage, finish.
TWO_WORD_CHUNKS = 6
ONE_WORD_CHUNKS = 5


def two_calls() -> Any:
    return reply(
        tool_calls=[
            {"call_id": "c1", "name": "echo", "arguments": {"text": "a"}},
            {"call_id": "c2", "name": "echo", "arguments": {"text": "b"}},
        ]
    )


@tool
async def echo(text: str) -> str:
    """Say ``text`` back."""
    return text


async def test_a_followup_to_idle_agent_opens_the_turn_before_returning(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter(["hello world"]))
    recorder = Recorder(agent)

    agent.followup(fixed("m1", "hi"))

    assert recorder.take() == [
        ("spliced", "next-turn", 0, 0, ("m1",)),
        ("live:inserted", "m1"),
        ("live:status", "running"),
        ("turn/start", 1),
        ("spliced", "next-turn", 0, 1, ()),
        ("live:claimed", "m1", 1),
    ]
    await agent.when_idle()
    assert recorder.take() == [
        ("step/start", 1, 1),
        ("user/message", "m1"),
        ("request/header", "initial"),
        ("assistant/chunk", TWO_WORD_CHUNKS),
        ("assistant/message", 1, 1),
        ("step/end", 1, 1),
        ("turn/end", 1, "completed"),
        ("live:status", "idle"),
    ]


async def test_a_assistant_message_cites_exactly_its_chunks(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter(["hello world"]))
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()

    events = agent.session.events
    chunk_seqs = tuple(e.seq for e in events if e.type == "assistant/chunk")
    (answer,) = [e for e in events if e.type == "assistant/message"]
    assert answer.source_event_seqs == chunk_seqs
    assert answer.data.message.content == (TextBlock(text="hello world"),)
    assert answer.data.usage is not None


async def test_b_tool_calls_run_in_model_order_then_a_final_step(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter([two_calls(), "all done"]), tools=[echo])
    recorder = Recorder(agent)

    agent.followup(fixed("m1", "go"))
    await agent.when_idle()

    timeline = recorder.take()
    assert timeline[6:] == [
        ("step/start", 1, 1),
        ("user/message", "m1"),
        ("request/header", "initial"),
        ("assistant/chunk", 8),
        ("assistant/message", 1, 1),
        ("tool/call", "c1"),
        ("tool/result", "c1", None),
        ("tool/call", "c2"),
        ("tool/result", "c2", None),
        ("step/end", 1, 1),
        ("step/start", 1, 2),
        ("assistant/chunk", TWO_WORD_CHUNKS),
        ("assistant/message", 1, 2),
        ("step/end", 1, 2),
        ("turn/end", 1, "completed"),
        ("live:status", "idle"),
    ]


async def test_b_each_tool_result_cites_its_call_and_has_a_fresh_id(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter([two_calls(), "all done"]), tools=[echo])
    agent.followup(fixed("m1", "go"))
    await agent.when_idle()

    events = agent.session.events
    calls: dict[str, int] = {e.data.call_id: e.seq for e in events if e.type == "tool/call"}
    results = [e for e in events if e.type == "tool/result"]
    assert [r.source_event_seqs for r in results] == [(calls["c1"],), (calls["c2"],)]
    assert [r.data.message.content[0].content for r in results] == [
        (TextBlock(text="a"),),
        (TextBlock(text="b"),),
    ]
    ids = {r.data.message.id for r in results}
    assert len(ids) == 2 and "m1" not in ids


async def test_c_steer_while_a_tool_runs_enters_the_next_step(make_agent: AgentFactory) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def slow() -> str:
        """Wait for the test."""
        started.set()
        await release.wait()
        return "finished"

    agent = make_agent(
        ScriptedAdapter([reply(tool_calls=[{"call_id": "c1", "name": "slow"}]), "ok"]), tools=[slow]
    )
    recorder = Recorder(agent)
    agent.followup(fixed("m1", "go"))
    await started.wait()
    recorder.take()

    agent.steer(fixed("s1", "also this"))

    assert recorder.take() == [
        ("spliced", "next-step", 0, 0, ("s1",)),
        ("live:inserted", "s1"),
    ]
    release.set()
    await agent.when_idle()
    assert recorder.take() == [
        ("tool/result", "c1", None),
        ("step/end", 1, 1),
        ("spliced", "next-step", 0, 1, ()),
        ("live:claimed", "s1", 1),
        ("step/start", 1, 2),
        ("user/message", "s1"),
        ("assistant/chunk", ONE_WORD_CHUNKS),
        ("assistant/message", 1, 2),
        ("step/end", 1, 2),
        ("turn/end", 1, "completed"),
        ("live:status", "idle"),
    ]


async def test_c_pending_next_step_input_forces_a_step_after_a_final_answer(
    make_agent: AgentFactory,
) -> None:
    gate = asyncio.Event()

    async def model(request: GenerateRequest) -> str:
        if len(request.messages) == 1:
            await gate.wait()
            return "first"
        return "second"

    adapter = FunctionAdapter(model)
    agent = make_agent(adapter)
    recorder = Recorder(agent)
    agent.followup(fixed("m1", "go"))
    await asyncio.sleep(0)
    agent.inject(fixed("i1", "by the way"))
    gate.set()
    await agent.when_idle()

    steps = [e for e in recorder.take() if e[0] in ("step/start", "user/message", "turn/end")]
    assert steps == [
        ("step/start", 1, 1),
        ("user/message", "m1"),
        ("step/start", 1, 2),
        ("user/message", "i1"),
        ("turn/end", 1, "completed"),
    ]
    history = adapter.requests[1].messages
    assert [history[0].id, history[1].role, history[2].id] == ["m1", "assistant", "i1"]


async def test_d_inject_while_idle_waits_and_rides_along_with_the_next_followup(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter(["hello world"]))
    recorder = Recorder(agent)

    agent.inject(fixed("i1", "context"))
    assert recorder.take() == [
        ("spliced", "next-step", 0, 0, ("i1",)),
        ("live:inserted", "i1"),
    ]
    assert agent.status == "idle"

    agent.followup(fixed("f1", "question"))
    await agent.when_idle()
    assert recorder.take() == [
        ("spliced", "next-turn", 0, 0, ("f1",)),
        ("live:inserted", "f1"),
        ("live:status", "running"),
        ("turn/start", 1),
        ("spliced", "next-step", 0, 1, ()),
        ("spliced", "next-turn", 0, 1, ()),
        ("live:claimed", "i1", 1),
        ("live:claimed", "f1", 1),
        ("step/start", 1, 1),
        ("user/message", "i1"),
        ("user/message", "f1"),
        ("request/header", "initial"),
        ("assistant/chunk", TWO_WORD_CHUNKS),
        ("assistant/message", 1, 1),
        ("step/end", 1, 1),
        ("turn/end", 1, "completed"),
        ("live:status", "idle"),
    ]


async def test_e_rejected_pre_step_ends_the_turn_blocked_and_drops_the_batch(
    make_agent: AgentFactory,
) -> None:
    adapter = ScriptedAdapter(["never sent"])
    agent = make_agent(adapter)
    seen: list[PreStep] = []

    async def refuse(step: PreStep, call_next: CallNext) -> Enter | Reject:
        seen.append(step)
        return Reject()

    agent.on_pre_step(refuse)
    recorder = Recorder(agent)
    forbidden = fixed("m1", "forbidden")
    agent.followup(forbidden)
    agent.followup(fixed("m2", "queued behind it"))
    await agent.when_idle()

    assert recorder.take() == [
        ("spliced", "next-turn", 0, 0, ("m1",)),
        ("live:inserted", "m1"),
        ("live:status", "running"),
        ("turn/start", 1),
        ("spliced", "next-turn", 0, 1, ()),
        ("live:claimed", "m1", 1),
        ("spliced", "next-turn", 0, 0, ("m2",)),
        ("live:inserted", "m2"),
        ("turn/end", 1, "blocked"),
        ("live:status", "idle"),
    ]
    assert len(seen) == 1 and seen[0].messages[0] is forbidden
    assert [m.id for m in agent.inbox.next_turn] == ["m2"]  # waits for the next waking send
    assert adapter.requests == []


async def test_g_additional_context_enters_the_inbox_right_after_its_result(
    make_agent: AgentFactory,
) -> None:
    context = create_user_message(content="file changed", source={"kind": "plugin", "plugin": "fs"})

    @tool
    async def look() -> ToolOutput:
        """Look around."""
        return ToolOutput("seen", additional_contexts=[context])

    calls = reply(
        tool_calls=[
            {"call_id": "c1", "name": "look"},
            {"call_id": "c2", "name": "echo", "arguments": {"text": "x"}},
        ]
    )
    agent = make_agent(ScriptedAdapter([calls, "ok"]), tools=[look, echo])
    recorder = Recorder(agent)
    agent.followup(fixed("m1", "go"))
    await agent.when_idle()

    timeline = recorder.take()
    start = timeline.index(("tool/call", "c1"))
    assert timeline[start : start + 13] == [
        ("tool/call", "c1"),
        ("tool/result", "c1", None),
        ("spliced", "next-step", 0, 0, (context.id,)),
        ("live:inserted", context.id),
        ("tool/call", "c2"),
        ("tool/result", "c2", None),
        ("step/end", 1, 1),
        ("spliced", "next-step", 0, 1, ()),
        ("live:claimed", context.id, 1),
        ("step/start", 1, 2),
        ("user/message", context.id),
        ("assistant/chunk", ONE_WORD_CHUNKS),
        ("assistant/message", 1, 2),
    ]
    result = next(e for e in agent.session.events if e.type == "tool/result")
    assert result.data.message.id != context.id
