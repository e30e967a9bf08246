"""Typed log access, checked by mypy with the suite (and run by pytest): every public
surface that hands out events types them as :data:`LogEvent`, whose items narrow on
``event.type == "..."`` to their class, and ``Session.append`` returns the class of its
type. Each ``assert_type`` fails the type check if a surface widens back to
``SessionEvent`` or the narrowing is lost (e.g. a class's ``type`` stops being a
``Literal``, or ``UnknownEvent``'s placeholder no longer excludes it)."""

from __future__ import annotations

import asyncio
from typing import assert_type

from dsh_agent import AgentLoop, RunResult, run
from dsh_llm import (
    ToolCallBlock,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
)
from dsh_llm.testing import ScriptedAdapter
from dsh_session import (
    AssistantMessageData,
    AssistantMessageEvent,
    ForeignEvent,
    LoadReport,
    LogEvent,
    MemorySessionStore,
    Session,
    StepData,
    ToolCallData,
    ToolCallEvent,
    ToolResultData,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartData,
    TurnStartEvent,
    UnknownEvent,
    UserMessageEvent,
    interrupted_turn_closers,
    parse_events,
)


def a_tool_turn() -> Session:
    session = Session.create()
    started = session.append("turn/start", TurnStartData(turn=1))
    assert_type(started, TurnStartEvent)
    session.append("step/start", StepData(turn=1, step=1))
    user = session.append(
        "user/message", create_user_message(content="hi", source={"kind": "user"})
    )
    assert_type(user, UserMessageEvent)
    call = ToolCallBlock(call_id="c1", name="echo", arguments="{}")
    asked = session.append(
        "assistant/message",
        AssistantMessageData(
            turn=1,
            step=1,
            message=create_assistant_message(
                content=[call], source={"provider": "test", "model": "m"}
            ),
        ),
    )
    assert_type(asked, AssistantMessageEvent)
    logged = session.append(
        "tool/call", ToolCallData(turn=1, step=1, call_id="c1", name="echo", arguments="{}")
    )
    assert_type(logged, ToolCallEvent)
    result = session.append(
        "tool/result",
        ToolResultData(
            turn=1, step=1, message=create_tool_result_message(call_id=call.call_id, content="ok")
        ),
        source_event_seqs=(logged.seq,),
    )
    assert_type(result, ToolResultEvent)
    assert_type(result.data, ToolResultData)
    step_end: str = "step/end"  # a type string only known at run time
    untyped = session.append(step_end, {"turn": 1, "step": 1})
    assert_type(untyped, LogEvent)
    assert untyped.type == "step/end"
    return session


def tool_reads(events: list[LogEvent]) -> tuple[list[str], list[str]]:
    """The tool names called and the call ids answered, read the way a user would."""
    names: list[str] = []
    answered: list[str] = []
    for event in events:
        assert_type(event, LogEvent)
        if event.type == "tool/result":
            assert_type(event, ToolResultEvent)
            answered.append(event.data.message.content[0].call_id)
        elif event.type == "tool/call":
            assert_type(event, ToolCallEvent)
            names.append(event.data.name)
        elif event.type == "session/title":
            assert_type(event, ForeignEvent)
    return names, answered


def test_append_returns_the_event_class_of_its_type() -> None:
    session = a_tool_turn()
    assert [type(e).__name__ for e in session.events][-3:] == [
        "ToolCallEvent",
        "ToolResultEvent",
        "StepEndEvent",
    ]


def test_session_events_narrow_on_the_type_string() -> None:
    session = a_tool_turn()
    assert_type(session.events[-1], LogEvent)
    assert tool_reads(list(session.events)) == (["echo"], ["c1"])
    names = [event.data.name for event in session.events if event.type == "tool/call"]
    assert names == ["echo"]
    results = [node.event for node in session.surface if node.event.type == "tool/result"]
    assert_type(results, list[ToolResultEvent])
    assert [result.data.message.content[0].call_id for result in results] == ["c1"]


def test_observers_are_given_log_events() -> None:
    session = a_tool_turn()
    seen: list[LogEvent] = []

    def on_event(event: LogEvent) -> None:  # accepted by subscribe only as a LogEvent observer
        seen.append(event)

    session.subscribe(on_event)
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    (end,) = seen
    assert end.type == "turn/end"
    assert_type(end, TurnEndEvent)
    assert end.data.reason.kind == "completed"


def test_parsed_repaired_and_loaded_events_are_log_events() -> None:
    session = a_tool_turn()
    parsed = parse_events([event.model_dump_json(by_alias=True) for event in session.events])
    assert_type(parsed, list[LogEvent])
    assert tool_reads(parsed) == (["echo"], ["c1"])
    closers = interrupted_turn_closers(session.events)
    assert_type(closers, list[LogEvent])
    assert [event.type for event in closers] == ["turn/end"]

    async def stored_and_followed() -> tuple[LoadReport, list[LogEvent]]:
        async with MemorySessionStore() as store:
            store.attach(session)
            await store.flush(session)
            store.detach(session)
            loaded = await store.load(session.id)
            followed: list[LogEvent] = []
            async for event in store.follow(session.id, poll_interval=0.01):
                assert_type(event, LogEvent)
                followed.append(event)
                if event.seq == loaded.seq - 1:
                    break
            return store.load_report(loaded), followed

    report, followed = asyncio.run(stored_and_followed())
    assert_type(report.appended, tuple[LogEvent, ...])
    assert [event.type for event in report.appended] == ["turn/end", "session/end-seed"]
    assert tool_reads(followed) == (["echo"], ["c1"])


def test_an_unknown_event_is_read_by_its_type_as_a_str() -> None:
    row = {"type": "ui/bookmark", "seq": 0, "time": 0, "data": {"n": 1}, "ignorable": True}
    events = parse_events([row])
    assert isinstance(events[0], UnknownEvent)
    # For type checkers an UnknownEvent's type is a placeholder literal (so comparisons
    # with known types exclude it); its real type string is read through str().
    assert [e.data for e in events if str(e.type) == "ui/bookmark"] == [{"n": 1}]


async def test_run_results_hold_log_events() -> None:
    agent = AgentLoop(
        session=Session.create(), adapter=ScriptedAdapter(["hello"]), provider="t", model="m"
    )
    result = await run(agent, create_user_message(content="hi", source={"kind": "user"}))
    assert_type(result, RunResult)
    assert_type(result.events, tuple[LogEvent, ...])
    replies = [e.data.message for e in result.events if e.type == "assistant/message"]
    assert [block.type for block in replies[0].content] == ["text"]
    await agent.aclose()
