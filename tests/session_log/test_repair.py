"""Crash repair: the events appended to close a turn a crash left open, with the
reference harness's exact texts, codes and deterministic ids."""

from __future__ import annotations

from dsh_llm import TextBlock
from dsh_session import (
    InterruptedReason,
    Session,
    StepEndEvent,
    ToolResultEvent,
    TurnEndEvent,
    interrupted_turn_closers,
)

from .support import request_calls, run_call, start_turn, tool_turn

OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably "
    "recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: "
    "retry only if the operation is read-only or idempotent; if it may have side effects, "
    "first verify external state or ask the user. Do not retry blindly."
)
NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. "
    "Retry it if it is still needed."
)


def crashed_during_tools() -> tuple[Session, int]:
    """Turn 2 cut while running tools: 'done' answered, 'started' recorded as started,
    'waiting' never started. Returns the session and the seq of the started call."""
    session = Session.create()
    tool_turn(session)
    turn, _ = start_turn(session)
    request_calls(session, turn, 1, "done", "started", "waiting")
    run_call(session, turn, 1, "done")
    started = session.append(
        "tool/call",
        {"turn": turn, "step": 1, "callId": "started", "name": "lookup", "arguments": "{}"},
    )
    return session, started.seq


def test_a_log_without_an_open_turn_needs_no_closers() -> None:
    session = Session.create()
    tool_turn(session)
    assert interrupted_turn_closers(session.events) == []
    assert interrupted_turn_closers([]) == []


def test_unanswered_calls_get_error_results_then_the_step_and_turn_close() -> None:
    session, _ = crashed_during_tools()
    closers = interrupted_turn_closers(session.events)
    assert [event.type for event in closers] == [
        "tool/result",
        "tool/result",
        "step/end",
        "turn/end",
    ]
    assert [event.seq for event in closers] == list(range(session.seq, session.seq + 4))
    assert {event.time for event in closers} == {session.events[-1].time}
    step_end, turn_end = closers[2], closers[3]
    assert isinstance(step_end, StepEndEvent) and step_end.data.turn == 2
    assert step_end.data.step == 1
    assert isinstance(turn_end, TurnEndEvent) and turn_end.data.turn == 2
    assert turn_end.data.reason == InterruptedReason()


def test_a_started_call_gets_outcome_unknown_citing_its_tool_call() -> None:
    session, started_seq = crashed_during_tools()
    unknown = interrupted_turn_closers(session.events)[0]
    assert isinstance(unknown, ToolResultEvent)
    seq = session.seq
    assert unknown.data.message.id == f"interrupted-tool-result-started-{seq}"
    assert unknown.data.message.source.call_id == "started"
    block = unknown.data.message.content[0]
    assert block.is_error is True
    assert block.content == (TextBlock(text=OUTCOME_UNKNOWN_TEXT),)
    assert unknown.data.error is not None
    assert (unknown.data.error.name, unknown.data.error.code) == (
        "ToolOutcomeUnknownError",
        "TOOL_OUTCOME_UNKNOWN",
    )
    assert unknown.source_event_seqs == (started_seq,)
    assert unknown.surface_op == "append"
    assert (unknown.data.turn, unknown.data.step) == (2, 1)


def test_a_call_that_never_started_gets_not_started_without_sources() -> None:
    session, _ = crashed_during_tools()
    not_started = interrupted_turn_closers(session.events)[1]
    assert isinstance(not_started, ToolResultEvent)
    assert not_started.data.message.id == f"interrupted-tool-result-waiting-{session.seq + 1}"
    assert not_started.data.message.content[0].content == (TextBlock(text=NOT_STARTED_TEXT),)
    assert not_started.data.error is not None
    assert (not_started.data.error.name, not_started.data.error.code) == (
        "ToolNotStartedError",
        "TOOL_NOT_STARTED",
    )
    assert not_started.source_event_seqs is None


def test_results_follow_the_order_the_model_requested_the_calls() -> None:
    session = Session.create()
    turn, _ = start_turn(session)
    request_calls(session, turn, 1, "z", "a", "m")
    closers = interrupted_turn_closers(session.events)
    called = [e.data.message.source.call_id for e in closers if isinstance(e, ToolResultEvent)]
    assert called == ["z", "a", "m"]


def test_repairing_the_same_log_twice_gives_the_same_events() -> None:
    session, _ = crashed_during_tools()
    first = interrupted_turn_closers(session.events)
    second = interrupted_turn_closers(list(session.events))
    assert first == second
    assert [e.model_dump_json() for e in first] == [e.model_dump_json() for e in second]


def test_a_turn_cut_between_steps_only_gets_turn_end() -> None:
    session = Session.create()
    turn, _ = start_turn(session)
    session.append("step/end", {"turn": turn, "step": 1})
    closers = interrupted_turn_closers(session.events)
    assert [event.type for event in closers] == ["turn/end"]


def test_a_turn_cut_mid_stream_closes_its_step_and_turn() -> None:
    session = Session.create()
    turn, _ = start_turn(session)
    session.append(
        "assistant/chunk",
        {"turn": turn, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "par"}},
    )
    assert [e.type for e in interrupted_turn_closers(session.events)] == ["step/end", "turn/end"]


def test_the_repaired_log_is_valid_and_answers_every_call() -> None:
    session, _ = crashed_during_tools()
    closers = interrupted_turn_closers(session.events)
    repaired = Session.from_log(session.header, [*session.events, *closers])
    assert repaired.open_turn is None
    history = repaired.derive_messages()
    answered = [m.source.call_id for m in history if m.source.kind == "tool"]  # type: ignore[union-attr]
    assert answered[-3:] == ["done", "started", "waiting"]
    repaired.append("session/end-seed", {})
    assert interrupted_turn_closers(repaired.events) == []
