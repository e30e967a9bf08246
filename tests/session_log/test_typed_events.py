"""Typed log access, checked by mypy with the suite: ``Session.append`` returns the
event class of its type, and ``session.typed_events`` items narrow on ``event.type``.
Each ``assert_type`` fails the type check if the narrowing or an overload is lost."""

from __future__ import annotations

from typing import assert_type

from dsh_llm import (
    ToolCallBlock,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
)
from dsh_session import Session
from dsh_session.events import (
    AssistantMessageData,
    AssistantMessageEvent,
    LogEvent,
    SessionEvent,
    StepData,
    ToolCallData,
    ToolCallEvent,
    ToolResultData,
    ToolResultEvent,
    TurnStartData,
    TurnStartEvent,
    UserMessageEvent,
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
    call = ToolCallBlock(id="c1", name="echo", arguments="{}")
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
            turn=1, step=1, message=create_tool_result_message(call_id=call.id, content="ok")
        ),
        source_event_seqs=(logged.seq,),
    )
    assert_type(result, ToolResultEvent)
    assert_type(result.data, ToolResultData)
    untyped = session.append("step/end", {"turn": 1, "step": 1})
    assert untyped.type == "step/end"
    return session


def test_append_returns_the_event_class_of_its_type() -> None:
    session = a_tool_turn()
    assert [type(e).__name__ for e in session.events][-3:] == [
        "ToolCallEvent",
        "ToolResultEvent",
        "StepEndEvent",
    ]


def test_typed_events_narrow_on_the_type_string() -> None:
    session = a_tool_turn()
    results: list[ToolResultData] = []
    names: list[str] = []
    for event in session.typed_events:
        assert_type(event, LogEvent)
        if event.type == "tool/result":
            assert_type(event, ToolResultEvent)
            results.append(event.data)
        elif event.type == "tool/call":
            assert_type(event, ToolCallEvent)
            names.append(event.data.name)
    assert names == ["echo"]
    assert [r.message.content[0].tool_call_id for r in results] == ["c1"]


def test_typed_events_is_the_same_view_as_events() -> None:
    session = a_tool_turn()
    view: object = session.typed_events
    assert view is session.events
    assert isinstance(session.events[0], SessionEvent)
