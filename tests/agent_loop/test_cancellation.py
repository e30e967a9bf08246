"""Cancellation (SPEC §4.5, reference-behaviour §1(f), §8): one scope per turn reaching
pre-step, the stream and tools; the first cause wins; tools drain; the inbox is
discarded unless kept; waking sends during an abort run once the turn has closed."""

from __future__ import annotations

import asyncio
import contextlib

from dsh_agent import Enter, PreStep, Reject, ToolContext, tool
from dsh_agent._agent import CallNext
from dsh_llm import GenerateRequest, ReasoningBlock, TextBlock
from dsh_llm.testing import FunctionAdapter, ScriptedAdapter, reply
from dsh_session import AbortedReason, DisposedCause, HookCause, UserCause

from .adapters import HangingAdapter, until
from .support import AgentFactory, Recorder, fixed


def turn_end_reasons(agent: object) -> list[object]:
    session = agent.session  # type: ignore[attr-defined]
    return [e.data.reason for e in session.events if e.type == "turn/end"]


async def test_cancel_mid_stream_discards_the_inbox_and_keeps_the_streamed_prefix(
    make_agent: AgentFactory,
) -> None:
    adapter = HangingAdapter()
    agent = make_agent(adapter)
    agent.followup(fixed("m1", "write"))
    agent.inject(fixed("i1", "context"))
    agent.followup(fixed("f2", "later"))
    await adapter.streaming.wait()
    recorder = Recorder(agent)

    agent.cancel()

    assert recorder.take() == [
        ("spliced", "next-step", 0, 1, (), "canceled"),
        ("live:discarded", "i1"),
        ("spliced", "next-turn", 0, 1, (), "canceled"),
        ("live:discarded", "f2"),
    ]
    await agent.when_idle()
    assert recorder.take() == [
        ("assistant/message", 1, 1, "interrupted"),
        ("step/end", 1, 1),
        ("turn/end", 1, "aborted"),
        ("live:status", "idle"),
    ]
    events = agent.session.events
    (kept,) = [e for e in events if e.type == "assistant/message"]
    assert kept.data.message.content == (TextBlock(text="partial answer"),)
    assert kept.source_event_seqs == tuple(e.seq for e in events if e.type == "assistant/chunk")
    assert turn_end_reasons(agent) == [AbortedReason(reason=UserCause())]
    assert agent.inbox.next_turn == () and agent.inbox.next_step == ()
    assert adapter.closed


async def test_cancel_with_keep_inbox_leaves_pending_input_waiting(
    make_agent: AgentFactory,
) -> None:
    adapter = HangingAdapter()
    agent = make_agent(adapter)
    agent.followup(fixed("m1", "write"))
    later = fixed("f2", "later")
    agent.followup(later)
    await adapter.streaming.wait()

    agent.cancel(keep_inbox=True)
    await agent.when_idle()

    assert not any(e.type == "agent/inbox/spliced" and e.data.outcome for e in agent.session.events)
    assert agent.inbox.next_turn == (later,)
    assert agent.status == "idle"
    assert len(adapter.requests) == 1  # the kept followup waits for the next waking send


async def test_a_blank_prefix_is_not_kept(make_agent: AgentFactory) -> None:
    from dsh_llm import TextDeltaChunk

    adapter = HangingAdapter([TextDeltaChunk(index=0, text="  \n")])
    agent = make_agent(adapter)
    agent.followup(fixed("m1", "write"))
    await adapter.streaming.wait()

    agent.cancel()
    await agent.when_idle()

    types = [e.type for e in agent.session.events]
    assert "assistant/message" not in types
    assert types[-2:] == ["step/end", "turn/end"]


async def test_waking_sends_during_an_abort_run_once_the_turn_has_closed(
    make_agent: AgentFactory,
) -> None:
    async def model(request: GenerateRequest) -> str:
        if len(request.messages) == 1:
            await asyncio.Event().wait()
        return "after the abort"

    adapter = FunctionAdapter(model)
    agent = make_agent(adapter)
    agent.followup(fixed("m1", "slow"))
    await until(lambda: len(adapter.requests) == 1)
    recorder = Recorder(agent)

    agent.cancel()
    agent.steer(fixed("s1", "go on"))  # while aborting: routed to next-turn and latched

    await agent.when_idle()
    timeline = recorder.take()
    assert timeline[:2] == [("spliced", "next-turn", 0, 0, ("s1",)), ("live:inserted", "s1")]
    assert timeline[2:9] == [
        ("step/end", 1, 1),
        ("turn/end", 1, "aborted"),
        ("live:status", "idle"),
        ("live:status", "running"),
        ("turn/start", 2),
        ("spliced", "next-turn", 0, 1, ()),
        ("live:claimed", "s1", 2),
    ]
    assert timeline[-2:] == [("turn/end", 2, "completed"), ("live:status", "idle")]


async def test_a_disposed_agent_does_not_latch_a_wake(make_agent: AgentFactory) -> None:
    adapter = HangingAdapter()
    agent = make_agent(adapter)
    agent.followup(fixed("m1", "slow"))
    await adapter.streaming.wait()

    agent.cancel("disposed")
    late = fixed("f2", "too late")
    agent.followup(late)
    await agent.when_idle()

    assert turn_end_reasons(agent) == [AbortedReason(reason=DisposedCause())]
    assert agent.inbox.next_turn == (late,)


async def test_the_first_cause_wins(make_agent: AgentFactory) -> None:
    adapter = HangingAdapter()
    agent = make_agent(adapter)
    agent.followup(fixed("m1", "slow"))
    await adapter.streaming.wait()

    agent.cancel(HookCause(reason="budget exhausted"))
    agent.cancel("user")
    await agent.when_idle()

    assert turn_end_reasons(agent) == [AbortedReason(reason=HookCause(reason="budget exhausted"))]


async def test_cancel_mid_tool_drains_it_and_aborts_the_calls_not_yet_started(
    make_agent: AgentFactory,
) -> None:
    started = asyncio.Event()
    saw_cancel: list[bool] = []

    @tool
    async def work(context: ToolContext) -> str:
        """Work until cancelled, then report honestly."""
        started.set()
        await context.cancelled.wait()
        saw_cancel.append(True)
        return "real result after cancellation"

    calls = reply(
        tool_calls=[
            {"call_id": "c1", "name": "work"},
            {"call_id": "c2", "name": "work"},
            {"call_id": "c3", "name": "work"},
        ]
    )
    agent = make_agent(ScriptedAdapter([calls]), tools=[work])
    agent.followup(fixed("m1", "go"))
    await started.wait()
    recorder = Recorder(agent)

    agent.cancel()
    await agent.when_idle()

    assert recorder.take() == [
        ("tool/result", "c1", "TOOL_CANCELLED"),
        ("tool/call", "c2"),
        ("tool/result", "c2", "ABORTED_BEFORE_DISPATCH"),
        ("tool/call", "c3"),
        ("tool/result", "c3", "ABORTED_BEFORE_DISPATCH"),
        ("step/end", 1, 1),
        ("turn/end", 1, "aborted"),
        ("live:status", "idle"),
    ]
    assert saw_cancel == [True]
    results = [e for e in agent.session.events if e.type == "tool/result"]
    drained = results[0].data.message.content[0].content
    assert TextBlock(text="real result after cancellation") in drained
    aborted = results[1].data
    assert aborted.error is not None and aborted.error.name == "AbortError"
    assert aborted.message.content[0].is_error
    assert aborted.message.content[0].content == (
        TextBlock(text="Error: tool call aborted before dispatch"),
    )


async def test_a_tool_that_ignores_cancellation_commits_its_real_result(
    make_agent: AgentFactory,
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def stubborn() -> str:
        """Finish no matter what."""
        started.set()
        await release.wait()
        return "done anyway"

    agent = make_agent(
        ScriptedAdapter([reply(tool_calls=[{"call_id": "c1", "name": "stubborn"}])]),
        tools=[stubborn],
    )
    agent.followup(fixed("m1", "go"))
    await started.wait()

    agent.cancel()
    await asyncio.sleep(0.01)
    assert agent.status == "running"  # the tool is never killed
    release.set()
    await agent.when_idle()

    (result,) = [e for e in agent.session.events if e.type == "tool/result"]
    assert result.data.message.content[0].content[-1] == TextBlock(text="done anyway")
    assert turn_end_reasons(agent) == [AbortedReason(reason=UserCause())]


async def test_cancel_during_pre_step_interrupts_the_handler(make_agent: AgentFactory) -> None:
    entered, interrupted = asyncio.Event(), asyncio.Event()

    async def slow_policy(step: PreStep, call_next: CallNext) -> Enter | Reject:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            interrupted.set()
            raise
        return await call_next()

    adapter = ScriptedAdapter(["never"])
    agent = make_agent(adapter)
    agent.on_pre_step(slow_policy)
    recorder = Recorder(agent)
    agent.followup(fixed("m1", "go"))
    await entered.wait()

    agent.cancel()
    await agent.when_idle()

    assert interrupted.is_set()
    assert recorder.timeline()[-2:] == [("turn/end", 1, "aborted"), ("live:status", "idle")]
    assert not any(e.type == "step/start" for e in agent.session.events)
    assert adapter.requests == []


async def test_a_handler_that_swallows_the_interruption_still_aborts_the_turn(
    make_agent: AgentFactory,
) -> None:
    entered = asyncio.Event()

    async def stubborn_policy(step: PreStep, call_next: CallNext) -> Enter | Reject:
        entered.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()
        return await call_next()

    agent = make_agent(ScriptedAdapter(["never"]))
    agent.on_pre_step(stubborn_policy)
    agent.followup(fixed("m1", "go"))
    await entered.wait()

    agent.cancel()
    await agent.when_idle()

    assert turn_end_reasons(agent) == [AbortedReason(reason=UserCause())]
    assert not any(e.type == "step/start" for e in agent.session.events)


async def test_a_pre_step_handler_may_cancel_its_own_turn(make_agent: AgentFactory) -> None:
    async def veto(step: PreStep, call_next: CallNext) -> Enter | Reject:
        step.agent.cancel(HookCause(reason="veto"))
        return await call_next()

    agent = make_agent(ScriptedAdapter(["never"]))
    agent.on_pre_step(veto)
    agent.followup(fixed("m1", "go"))
    await agent.when_idle()

    assert turn_end_reasons(agent) == [AbortedReason(reason=HookCause(reason="veto"))]


async def test_cancelling_an_idle_agent_only_clears_the_inbox(make_agent: AgentFactory) -> None:
    agent = make_agent(ScriptedAdapter([]))
    agent.inject(fixed("i1", "context"))
    recorder = Recorder(agent)

    agent.cancel()

    assert recorder.take() == [
        ("spliced", "next-step", 0, 1, (), "canceled"),
        ("live:discarded", "i1"),
    ]
    assert agent.status == "idle"


async def test_cancel_from_a_running_status_observer_opens_no_turn(
    make_agent: AgentFactory,
) -> None:
    agent = make_agent(ScriptedAdapter(["never"]))
    agent.subscribe(lambda n: agent.cancel() if getattr(n, "status", None) == "running" else None)
    recorder = Recorder(agent)

    agent.followup(fixed("m1", "go"))

    assert recorder.take() == [
        ("spliced", "next-turn", 0, 0, ("m1",)),
        ("live:inserted", "m1"),
        ("spliced", "next-turn", 0, 1, (), "canceled"),
        ("live:discarded", "m1"),
        ("live:status", "running"),
        ("live:status", "idle"),
    ]
    await agent.when_idle()
    assert agent.session.last_turn == 0


async def test_cancelling_the_driver_task_from_outside_closes_the_turn_as_disposed(
    make_agent: AgentFactory,
) -> None:
    started = asyncio.Event()
    told: list[bool] = []

    @tool
    async def careful(context: ToolContext) -> str:
        """Stop when told."""
        started.set()
        await context.cancelled.wait()
        told.append(True)
        return "stopped"

    agent = make_agent(
        ScriptedAdapter([reply(tool_calls=[{"call_id": "c1", "name": "careful"}])]), tools=[careful]
    )
    agent.followup(fixed("m1", "go"))
    await started.wait()
    driver = next(
        task
        for task in asyncio.all_tasks()
        if task is not asyncio.current_task() and "_drive" in repr(task.get_coro())
    )

    driver.cancel()
    await agent.when_idle()

    assert driver.cancelled()
    assert told == [True]
    assert turn_end_reasons(agent) == [AbortedReason(reason=DisposedCause())]
    assert [e.type for e in agent.session.events][-3:] == ["tool/result", "step/end", "turn/end"]


async def test_an_interrupted_reasoning_prefix_is_kept_too(make_agent: AgentFactory) -> None:
    from dsh_llm import ReasoningDeltaChunk

    adapter = HangingAdapter([ReasoningDeltaChunk(index=0, text="thinking...")])
    agent = make_agent(adapter)
    agent.followup(fixed("m1", "go"))
    await adapter.streaming.wait()

    agent.cancel()
    await agent.when_idle()

    (kept,) = [e for e in agent.session.events if e.type == "assistant/message"]
    assert kept.data.interrupted is True
    assert kept.data.message.content == (ReasoningBlock(text="thinking..."),)
