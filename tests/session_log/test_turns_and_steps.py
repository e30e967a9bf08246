"""Turn and step bookkeeping the agent loop relies on."""

from __future__ import annotations

import pytest

from dsh_session import Session, SessionValidationError

from .support import (
    assistant,
    finish_turn,
    request_calls,
    result,
    run_call,
    start_turn,
    tool_turn,
    user,
)


def test_a_fresh_session_has_no_turn() -> None:
    session = Session.create()
    assert session.open_turn is None
    assert session.open_step is None
    assert session.last_turn == 0


def test_open_turn_and_step_follow_the_log() -> None:
    session = Session.create()
    turn, _ = start_turn(session)
    assert (session.open_turn, session.open_step, session.last_turn) == (1, 1, 1)
    finish_turn(session, turn, 1)
    assert (session.open_turn, session.open_step, session.last_turn) == (None, None, 1)


def test_turns_are_numbered_one_after_another() -> None:
    session = Session.create()
    with pytest.raises(SessionValidationError, match="the next turn is 1"):
        session.append("turn/start", {"turn": 2})
    tool_turn(session)
    with pytest.raises(SessionValidationError, match="the next turn is 2"):
        session.append("turn/start", {"turn": 5})
    session.append("turn/start", {"turn": 2})


def test_steps_restart_at_one_in_each_turn() -> None:
    session = Session.create()
    tool_turn(session)  # two steps
    turn, _ = start_turn(session)
    assert session.open_step == 1
    session.append("step/end", {"turn": turn, "step": 1})
    with pytest.raises(SessionValidationError, match="the next step of turn 2 is 2"):
        session.append("step/start", {"turn": turn, "step": 3})


@pytest.mark.parametrize(
    ("event_type", "data"),
    [
        ("step/start", {"turn": 1, "step": 1}),
        ("step/end", {"turn": 1, "step": 1}),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
        (
            "assistant/chunk",
            {
                "turn": 1,
                "step": 1,
                "chunk": {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 1}},
            },
        ),
        ("tool/call", {"turn": 1, "step": 1, "callId": "c", "name": "n", "arguments": ""}),
    ],
)
def test_turn_scoped_events_are_refused_outside_a_turn(event_type: str, data: object) -> None:
    session = Session.create()
    with pytest.raises(SessionValidationError, match="no turn is open"):
        session.append(event_type, data)
    assert session.seq == 0


def test_a_step_scoped_event_is_refused_between_steps() -> None:
    session = Session.create()
    session.append("turn/start", {"turn": 1})
    with pytest.raises(SessionValidationError, match="no step of turn 1 is open"):
        session.append("assistant/message", {"turn": 1, "step": 1, "message": assistant("x")})


def test_non_turn_scoped_events_may_come_between_turns() -> None:
    session = Session.create()
    session.append("user/message", user())
    session.append(
        "request/header",
        {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"},
    )
    session.append("request/context", {"provider": "p", "model": "m"})
    session.append("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [user()]})
    session.append("session/end-seed", {})
    assert session.seq == 5


def test_a_turn_may_end_without_any_step() -> None:
    session = Session.create()
    session.append("turn/start", {"turn": 1})
    session.append("turn/end", {"turn": 1, "reason": {"kind": "blocked"}})
    assert session.open_turn is None


def test_a_result_may_come_without_a_tool_call_when_the_call_never_started() -> None:
    session = Session.create()
    turn, _ = start_turn(session)
    request_calls(session, turn, 1, "a", "b")
    run_call(session, turn, 1, "a")
    session.append("tool/result", {"turn": turn, "step": 1, "message": result("b")})
    with pytest.raises(SessionValidationError, match="already answered"):
        session.append("tool/result", {"turn": turn, "step": 1, "message": result("b")})


def test_a_step_may_end_with_calls_unanswered() -> None:
    """As in the reference harness, step/end forgets unanswered calls (a loop failure
    may leave them); a later result for them is then refused."""
    session = Session.create()
    turn, _ = start_turn(session)
    request_calls(session, turn, 1, "a")
    session.append("step/end", {"turn": turn, "step": 1})
    session.append("step/start", {"turn": turn, "step": 2})
    with pytest.raises(SessionValidationError):
        session.append("tool/result", {"turn": turn, "step": 2, "message": result("a")})


def test_event_times_never_go_backwards() -> None:
    session = Session.create()
    times = [session.append("user/message", user()).time for _ in range(50)]
    assert times == sorted(times)
