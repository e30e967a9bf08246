"""agent.stream(): the typed updates of a run, in order, keyed by message id or seq."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dsh_agent import AgentLoop, LiveUpdate, StreamOverflowError, tool
from dsh_agent.streaming import (
    AgentUpdate,
    AssistantCommitted,
    AssistantFailed,
    AssistantStarted,
    MessageClaimed,
    MessageQueued,
    ReasoningDelta,
    StatusUpdate,
    TextDelta,
    ToolCallCommitted,
    ToolResultCommitted,
    TurnEnded,
    TurnStarted,
    UpdateStream,
    UserMessageEntered,
    ag_ui_events,
    run_stream,
)
from dsh_llm import LlmFailure, StreamChunk, TextBlock, TextDeltaChunk, create_user_message
from dsh_llm.errors import InputError
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


@tool
async def lookup(city: str) -> str:
    """Look up the weather."""
    return f"sunny in {city}"


def _agent(*responses: Any) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter(list(responses)),
        provider="test",
        model="test-model",
        tools=[lookup],
        check_requests=True,
    )


def _tool_turn() -> AgentLoop:
    calls = reply(
        text="Let me look.",
        reasoning="need weather",
        tool_calls=[{"call_id": "c1", "name": "lookup", "arguments": {"city": "Oslo"}}],
    )
    return _agent(calls, "It is sunny in Oslo.")


def _describe(update: AgentUpdate) -> tuple[Any, ...]:
    match update:
        case MessageQueued() | MessageClaimed() | UserMessageEntered():
            return (type(update).__name__, update.message_id)
        case StatusUpdate(status):
            return ("status", status)
        case TurnStarted(turn) | TurnEnded(turn):
            return (type(update).__name__, turn)
        case AssistantStarted() | AssistantCommitted():
            return (type(update).__name__,)
        case TextDelta(_, index, text) | ReasoningDelta(_, index, text):
            return (type(update).__name__, index, text)
        case ToolCallCommitted(call_id=call_id) | ToolResultCommitted(call_id=call_id):
            return (type(update).__name__, call_id)
    return (type(update).__name__,)


async def test_the_live_updates_in_the_stream_are_the_objects_observers_get() -> None:
    agent = _tool_turn()
    question = create_user_message(content="weather in Oslo?", source={"kind": "user"})
    observed: list[LiveUpdate] = []
    agent.subscribe(observed.append)

    updates = [update async for update in agent.stream(question)]

    live = [u for u in updates if isinstance(u, LiveUpdate)]
    assert [type(u).__name__ for u in observed] == [
        "MessageQueued",
        "StatusUpdate",
        "MessageClaimed",
        "AssistantStarted",
        "AssistantStarted",
        "StatusUpdate",
    ]
    assert len(live) == len(observed)
    assert all(streamed is sent for streamed, sent in zip(live, observed, strict=True))
    queued = observed[0]
    assert isinstance(queued, MessageQueued) and queued.message is question


async def test_a_tool_turn_streams_every_element_in_order_with_its_ids() -> None:
    agent = _tool_turn()
    question = create_user_message(content="weather in Oslo?", source={"kind": "user"})

    updates = [update async for update in agent.stream(question, merge_deltas=False)]

    assert [_describe(u) for u in updates] == [
        ("MessageQueued", question.id),
        ("status", "running"),
        ("TurnStarted", 1),
        ("MessageClaimed", question.id),
        ("UserMessageEntered", question.id),
        ("AssistantStarted",),
        ("ReasoningDelta", 0, "need "),
        ("ReasoningDelta", 0, "weather"),
        ("TextDelta", 1, "Let "),
        ("TextDelta", 1, "me "),
        ("TextDelta", 1, "look."),
        ("AssistantCommitted",),
        ("ToolCallCommitted", "c1"),
        ("ToolResultCommitted", "c1"),
        ("AssistantStarted",),
        ("TextDelta", 0, "It "),
        ("TextDelta", 0, "is "),
        ("TextDelta", 0, "sunny "),
        ("TextDelta", 0, "in "),
        ("TextDelta", 0, "Oslo."),
        ("AssistantCommitted",),
        ("TurnEnded", 1),
        ("status", "idle"),
    ]
    events = agent.session.events
    started = [u for u in updates if isinstance(u, AssistantStarted)]
    committed = [u for u in updates if isinstance(u, AssistantCommitted)]
    # The deltas carry the id the committed message has, minted before the stream.
    assert [s.message_id for s in started] == [c.message_id for c in committed]
    for commit in committed:
        deltas = [
            u
            for u in updates
            if isinstance(u, TextDelta | ReasoningDelta) and u.message_id == commit.message_id
        ]
        event = events[commit.seq]
        assert event.type == "assistant/message" and event.data.message is commit.message
        assert {d.seq for d in deltas} <= set(event.source_event_seqs or ())
    call = next(u for u in updates if isinstance(u, ToolCallCommitted))
    result = next(u for u in updates if isinstance(u, ToolResultCommitted))
    assert call.message_id == committed[0].message_id  # the call's parent message
    result_event = events[result.seq]
    assert result_event.type == "tool/result" and result_event.data.message is result.message
    assert events[call.seq].type == "tool/call"
    end = next(u for u in updates if isinstance(u, TurnEnded))
    assert end.kind == "completed" and events[end.seq].type == "turn/end"
    await agent.aclose()


async def test_a_lagging_consumer_gets_merged_deltas_with_every_character() -> None:
    agent = _tool_turn()
    stream = agent.stream(create_user_message(content="weather?", source={"kind": "user"}))
    await agent.when_idle()  # the loop ran to the end while nobody read

    updates = [update async for update in stream]

    texts = [(u.index, u.text) for u in updates if isinstance(u, TextDelta)]
    assert texts == [(1, "Let me look."), (0, "It is sunny in Oslo.")]
    assert updates[-1] == StatusUpdate("idle")
    await agent.aclose()


async def test_a_failed_model_call_names_the_message_that_will_not_exist() -> None:
    failure = LlmFailure(message="overloaded", code="SERVER")
    agent = _agent(failure)

    updates = [
        u async for u in agent.stream(create_user_message(content="hi", source={"kind": "user"}))
    ]

    started = next(u for u in updates if isinstance(u, AssistantStarted))
    failed = next(u for u in updates if isinstance(u, AssistantFailed))
    end = next(u for u in updates if isinstance(u, TurnEnded))
    assert failed.message_id == started.message_id and failed.failure == failure
    assert end.kind == "error"
    assert not any(isinstance(u, AssistantCommitted) for u in updates)
    assert agent.session.surface_seq_of(started.message_id) is None
    await agent.aclose()


async def test_overflow_delivers_what_was_buffered_then_names_the_resume_seq() -> None:
    agent = _tool_turn()
    stream = agent.stream(
        create_user_message(content="weather?", source={"kind": "user"}),
        max_pending=4,
        merge_deltas=False,
    )
    await agent.when_idle()  # the slow consumer did not block the loop

    received: list[AgentUpdate] = []
    with pytest.raises(StreamOverflowError) as raised:
        async for update in stream:
            received.append(update)

    assert len(received) == 4
    assert raised.value.limit == 4
    assert raised.value.seq == next(
        e.seq for e in agent.session.events if e.type == "user/message"
    )  # the first event not delivered: the fifth update would have come from it
    assert raised.value.session_id == agent.id
    await agent.aclose()


async def test_breaking_out_of_the_stream_unsubscribes_and_the_turn_goes_on() -> None:
    agent = _tool_turn()
    async for update in agent.stream(
        create_user_message(content="weather?", source={"kind": "user"})
    ):
        if isinstance(update, TurnStarted):
            break
    gc.collect()

    assert agent._observers == []
    assert agent.session._observers == {}
    await agent.when_idle()
    assert agent.session.events[-1].type == "turn/end"
    await agent.aclose()


async def test_aclose_and_async_with_unsubscribe() -> None:
    agent = _tool_turn()
    async with run_stream(
        agent, create_user_message(content="weather?", source={"kind": "user"})
    ) as stream:
        first = await anext(stream)
        assert isinstance(first, MessageQueued)
    assert agent._observers == []
    assert [u async for u in stream] == []
    await agent.when_idle()

    second = agent.stream(create_user_message(content="again", source={"kind": "user"}))
    await second.aclose()
    assert agent.session._observers == {}
    await agent.when_idle()
    await agent.aclose()


async def test_a_refused_send_raises_at_once_and_observes_nothing() -> None:
    agent = _agent("hello")
    question = create_user_message(content="hi", source={"kind": "user"})
    [u async for u in agent.stream(question)]

    with pytest.raises(Exception, match="already in the history"):
        agent.stream(question)
    assert agent._observers == []
    with pytest.raises(InputError, match="not int"):
        agent.stream(7)  # type: ignore[arg-type]
    await agent.aclose()


class _HangingModel:
    """Streams two text deltas, then waits until the turn is cancelled."""

    async def stream(self, request: object) -> AsyncIterator[StreamChunk]:
        yield TextDeltaChunk(index=0, text="partial ")
        yield TextDeltaChunk(index=0, text="answer")
        await asyncio.Event().wait()


async def test_a_cancelled_stream_commits_the_prefix_under_the_streamed_id() -> None:
    agent = AgentLoop(session=Session.create(), adapter=_HangingModel(), provider="test", model="m")
    question = create_user_message(content="hi", source={"kind": "user"})
    updates: list[AgentUpdate] = []
    async for update in agent.stream(question):
        updates.append(update)
        if isinstance(update, TextDelta) and update.text.endswith("answer"):
            agent.cancel()

    started = next(u for u in updates if isinstance(u, AssistantStarted))
    committed = next(u for u in updates if isinstance(u, AssistantCommitted))
    assert committed.interrupted and committed.message_id == started.message_id
    assert committed.message.content == (TextBlock(text="partial answer"),)
    end = next(u for u in updates if isinstance(u, TurnEnded))
    assert end.kind == "aborted"
    events = list(ag_ui_events(updates, thread_id=agent.id, run_id=question.id))
    assert events[-1]["outcome"] == {"type": "cancelled"}
    await agent.aclose()


async def _streamed_until_the_model_hangs() -> tuple[AgentLoop, UpdateStream]:
    """An agent whose model hangs after two deltas, and its stream read that far: the
    next read parks until something else happens."""
    agent = AgentLoop(session=Session.create(), adapter=_HangingModel(), provider="test", model="m")
    updates = agent.stream(create_user_message(content="hi", source={"kind": "user"}))
    texts: list[str] = []
    async for update in updates:
        if isinstance(update, TextDelta):
            texts.append(update.text)
        if "".join(texts) == "partial answer":
            break
    return agent, updates


async def test_a_consumer_cancelled_while_it_waits_can_read_on_afterwards(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Cancelling the task that awaits the next update cancels only that wait: what
    arrives afterwards is kept, and a later read gets it in order."""
    agent, updates = await _streamed_until_the_model_hangs()
    waiting = asyncio.ensure_future(updates.__anext__())
    await asyncio.sleep(0)
    assert not waiting.done()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    agent.cancel()
    await agent.when_idle()  # the turn's last updates come while nobody waits
    rest = [update async for update in updates]
    committed = next(u for u in rest if isinstance(u, AssistantCommitted))
    assert committed.interrupted
    assert committed.message.content == (TextBlock(text="partial answer"),)
    assert isinstance(rest[-1], StatusUpdate) and rest[-1].status == "idle"
    assert not [record for record in caplog.records if record.levelname == "ERROR"]
    await agent.aclose()


async def test_a_second_task_reading_while_one_waits_is_refused() -> None:
    """Only one reader is woken per update, so a second concurrent reader is refused
    at once instead of waiting for ever; the first still gets every update."""
    agent, updates = await _streamed_until_the_model_hangs()
    first = asyncio.ensure_future(updates.__anext__())
    await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="already waiting"):
        await updates.__anext__()
    agent.cancel()
    assert isinstance(await first, AssistantCommitted)
    rest = [update async for update in updates]
    assert isinstance(rest[-1], StatusUpdate) and rest[-1].status == "idle"
    await agent.aclose()


async def test_a_stream_joining_a_running_turn_names_each_calls_parent() -> None:
    release = asyncio.Event()

    @tool
    async def slow(n: int) -> str:
        """Waits for the test on its first call."""
        if n == 1:
            await release.wait()
        return str(n)

    calls = reply(
        tool_calls=[
            {"call_id": "c1", "name": "slow", "arguments": {"n": 1}},
            {"call_id": "c2", "name": "slow", "arguments": {"n": 2}},
        ]
    )
    agent = AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([calls, "first done", "second done"]),
        provider="test",
        model="m",
        tools=[slow],
    )
    agent.followup(create_user_message(content="one", source={"kind": "user"}))
    while not any(e.type == "tool/call" for e in agent.session.events):
        await asyncio.sleep(0)
    parent = next(e for e in agent.session.events if e.type == "assistant/message")

    stream = agent.stream(create_user_message(content="two", source={"kind": "user"}))
    release.set()
    updates = [u async for u in stream]

    joined = [u for u in updates if isinstance(u, ToolCallCommitted)]
    assert [(u.call_id, u.message_id) for u in joined] == [("c2", parent.data.message.id)]
    assert [u.kind for u in updates if isinstance(u, TurnEnded)] == ["completed", "completed"]
    await agent.aclose()
