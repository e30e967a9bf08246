"""Append validates everything before it commits: a rejected append changes nothing
(same events, same seq, same derived history, no observer call) and says which seq
and field were at fault."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from dsh_llm import TextBlock, ToolResultBlock, replace_content
from dsh_session import Replace, Session, SessionEvent, SessionValidationError

from .support import (
    Recorder,
    ToolTurn,
    assistant,
    request_calls,
    result,
    start_turn,
    tool_turn,
    user,
)


@dataclass
class Scene:
    """A session with one complete tool turn (turn 1) and turn 2 open in step 1, where
    call ``open-call`` was requested and started but not answered."""

    session: Session
    done: ToolTurn
    open_request: SessionEvent


@pytest.fixture
def scene() -> Scene:
    session = Session.create()
    done = tool_turn(session)
    turn, _ = start_turn(session)
    open_request = request_calls(session, turn, 1, "open-call")
    session.append(
        "tool/call",
        {"turn": turn, "step": 1, "callId": "open-call", "name": "lookup", "arguments": "{}"},
    )
    return Scene(session, done, open_request)


def rewrite(scene: Scene, **changes: object) -> dict[str, object]:
    """tool/result data rewriting turn 1's result, with some fields changed."""
    original = scene.done.result.data.message
    block = original.content[0]
    message = replace_content(
        original,
        [ToolResultBlock(call_id=block.call_id, content=(TextBlock(text="[pruned]"),))],
    )
    return {"turn": 1, "step": 1, "message": message, **changes}


BadAppend = Callable[[Scene], object]

BAD_APPENDS: dict[str, tuple[BadAppend, str]] = {
    "unknown type": (lambda s: s.session.append("turn/begin", {"turn": 3}), "type"),
    "payload missing a field": (
        lambda s: s.session.append("step/end", {"turn": 2}),
        "data.step",
    ),
    "payload of another type": (
        lambda s: s.session.append("step/end", {"turn": 2, "step": 1, "callId": "x"}),
        "data.callId",
    ),
    "surfaceOp on a non-surface event": (
        lambda s: s.session.append("step/end", {"turn": 2, "step": 1}, surface_op="append"),
        "surfaceOp",
    ),
    "sourceEventSeqs on a non-surface event": (
        lambda s: s.session.append("step/end", {"turn": 2, "step": 1}, source_event_seqs=[1]),
        "sourceEventSeqs",
    ),
    "replace op with an extra key": (
        lambda s: s.session.append(
            "user/message",
            user(),
            surface_op={"op": "replace", "start": 2, "end": 2, "extra": 1},
            source_event_seqs=[2],
        ),
        "surfaceOp.replace.extra",
    ),
    "unknown surface op": (
        lambda s: s.session.append("user/message", user(), surface_op="prepend"),  # type: ignore[call-overload]
        "surfaceOp",
    ),
    "negative seq cited": (
        lambda s: s.session.append("user/message", user(), source_event_seqs=[-1]),
        "sourceEventSeqs.0",
    ),
    "seq cited from the future": (
        lambda s: s.session.append("user/message", user(), source_event_seqs=[s.session.seq]),
        "sourceEventSeqs",
    ),
    "seq cited twice": (
        lambda s: s.session.append("user/message", user(), source_event_seqs=[1, 1]),
        "sourceEventSeqs",
    ),
    "empty sourceEventSeqs on user/message": (
        lambda s: s.session.append("user/message", user(), source_event_seqs=[]),
        "sourceEventSeqs",
    ),
    "tool result as user/message data": (
        lambda s: s.session.append("user/message", result("open-call")),
        "data",
    ),
    "turn/start while a turn is open": (
        lambda s: s.session.append("turn/start", {"turn": 3}),
        "type",
    ),
    "step/start while a step is open": (
        lambda s: s.session.append("step/start", {"turn": 2, "step": 2}),
        "type",
    ),
    "turn/end while a step is open": (
        lambda s: s.session.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}}),
        "type",
    ),
    "chunk naming another step": (
        lambda s: s.session.append(
            "assistant/chunk",
            {"turn": 2, "step": 2, "chunk": {"type": "text-delta", "index": 0, "text": "x"}},
        ),
        "data.step",
    ),
    "chunk naming another turn": (
        lambda s: s.session.append(
            "assistant/chunk",
            {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "x"}},
        ),
        "data.turn",
    ),
    "tool/call nobody requested": (
        lambda s: s.session.append(
            "tool/call",
            {"turn": 2, "step": 1, "callId": "ghost", "name": "lookup", "arguments": "{}"},
        ),
        "data.callId",
    ),
    "tool/call started twice": (
        lambda s: s.session.append(
            "tool/call",
            {"turn": 2, "step": 1, "callId": "open-call", "name": "lookup", "arguments": "{}"},
        ),
        "data.callId",
    ),
    "tool/result for a call nobody requested": (
        lambda s: s.session.append(
            "tool/result", {"turn": 2, "step": 1, "message": result("ghost")}
        ),
        "data.message.source.callId",
    ),
    "a call id requested twice in one step": (
        lambda s: s.session.append(
            "assistant/message",
            {"turn": 2, "step": 1, "message": assistant(calls=("open-call",))},
        ),
        "data.message.content",
    ),
    "replace starting off the surface": (
        lambda s: s.session.append(
            "user/message",
            user("summary"),
            surface_op=Replace(start=0, end=s.done.answer.seq),
            source_event_seqs=[0, s.done.answer.seq],
        ),
        "surfaceOp.start",
    ),
    "replace with start after end": (
        lambda s: s.session.append(
            "user/message",
            user("summary"),
            surface_op=Replace(start=s.done.answer.seq, end=s.done.prompt.seq),
            source_event_seqs=[s.done.prompt.seq, s.done.answer.seq],
        ),
        "surfaceOp",
    ),
    "replace not citing every shadowed event": (
        lambda s: s.session.append(
            "user/message",
            user("summary"),
            surface_op=Replace(start=s.done.prompt.seq, end=s.done.answer.seq),
            source_event_seqs=[s.done.prompt.seq, s.done.answer.seq],
        ),
        "sourceEventSeqs",
    ),
    "summary cutting a call from its result": (
        lambda s: s.session.append(
            "user/message",
            user("summary"),
            surface_op=Replace(start=s.done.prompt.seq, end=s.done.request.seq),
            source_event_seqs=[s.done.prompt.seq, s.done.request.seq],
        ),
        "surfaceOp",
    ),
    "summary cutting a result from its call": (
        lambda s: s.session.append(
            "user/message",
            user("summary"),
            surface_op=Replace(start=s.done.result.seq, end=s.done.answer.seq),
            source_event_seqs=[s.done.result.seq, s.done.answer.seq],
        ),
        "surfaceOp",
    ),
    "rewrite changing the tool result's id": (
        lambda s: s.session.append(
            "tool/result",
            {"turn": 1, "step": 1, "message": result(s.done.result.data.message.source.call_id)},
            surface_op=Replace(start=s.done.result.seq, end=s.done.result.seq),
            source_event_seqs=[s.done.result.seq],
        ),
        "data.message.id",
    ),
    "rewrite moving the result to another step": (
        lambda s: s.session.append(
            "tool/result",
            rewrite(s, step=2),
            surface_op=Replace(start=s.done.result.seq, end=s.done.result.seq),
            source_event_seqs=[s.done.result.seq],
        ),
        "data.step",
    ),
    "rewrite adding an error": (
        lambda s: s.session.append(
            "tool/result",
            rewrite(s, error={"name": "X", "code": "Y"}),
            surface_op=Replace(start=s.done.result.seq, end=s.done.result.seq),
            source_event_seqs=[s.done.result.seq],
        ),
        "data.error",
    ),
    "tool/result replacing a user message": (
        lambda s: s.session.append(
            "tool/result",
            rewrite(s),
            surface_op=Replace(start=s.done.prompt.seq, end=s.done.prompt.seq),
            source_event_seqs=[s.done.prompt.seq],
        ),
        "surfaceOp",
    ),
    "message keeping an id while replacing two nodes": (
        lambda s: s.session.append(
            "assistant/message",
            {"turn": 1, "step": 2, "message": s.done.answer.data.message},
            surface_op=Replace(start=s.done.result.seq, end=s.done.answer.seq),
            source_event_seqs=[s.done.request.seq, s.done.result.seq, s.done.answer.seq],
        ),
        "data.message.id",
    ),
}


@pytest.mark.parametrize("case", list(BAD_APPENDS))
def test_rejected_append_changes_nothing(scene: Scene, case: str) -> None:
    bad_append, field = BAD_APPENDS[case]
    session = scene.session
    events_before = list(session.events)
    seq_before = session.seq
    history_before = list(session.derive_messages())
    seen = Recorder()
    session.subscribe(seen)

    with pytest.raises(SessionValidationError) as rejected:
        bad_append(scene)

    assert rejected.value.seq == seq_before
    assert rejected.value.field == field
    assert session.seq == seq_before
    assert all(a is b for a, b in zip(session.events, events_before, strict=True))
    assert all(a is b for a, b in zip(session.derive_messages(), history_before, strict=True))
    assert seen.events == []


def test_the_scene_itself_accepts_the_valid_next_events(scene: Scene) -> None:
    """The rejections above are about the bad events, not a broken scene."""
    session = scene.session
    session.append("tool/result", {"turn": 2, "step": 1, "message": result("open-call")})
    session.append("step/end", {"turn": 2, "step": 1})
    session.append("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    session.append("session/end-seed", {})
    assert session.open_turn is None


def test_error_message_names_the_seq_and_the_problem(scene: Scene) -> None:
    with pytest.raises(
        SessionValidationError, match=r"step/start event \d+ .*step 1 is still open"
    ):
        scene.session.append("step/start", {"turn": 2, "step": 2})


def test_a_rejected_assistant_message_requests_no_call(scene: Scene) -> None:
    """The surface refuses the message (its id is already on the surface) after its calls
    were checked: the calls it names must not be left awaiting a result."""
    taken = scene.done.answer.data.message.id
    wire = assistant(calls=("fresh",)).model_dump(mode="json", by_alias=True)
    message = type(scene.done.answer.data.message).model_validate({**wire, "id": taken})
    session = scene.session
    with pytest.raises(SessionValidationError) as rejected:
        session.append("assistant/message", {"turn": 2, "step": 1, "message": message})
    assert rejected.value.field == "data.message.id"
    with pytest.raises(SessionValidationError) as unrequested:
        session.append("tool/result", {"turn": 2, "step": 1, "message": result("fresh")})
    assert unrequested.value.field == "data.message.source.callId"
