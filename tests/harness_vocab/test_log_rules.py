"""The log rules amended to what the harness writes (see the harness-vocabulary decision)."""

from __future__ import annotations

from typing import Any

from session_log.support import start_turn, tool_turn, user

from dsh_session import Replace, Session


def _between_turns() -> tuple[Session, Any]:
    session = Session.create()
    return session, tool_turn(session)


def test_a_foreign_event_is_appended_and_kept_as_given() -> None:
    session, _ = _between_turns()
    todos = {"todos": [{"content": "write the test", "status": "pending"}]}
    event = session.append("todo/write", todos)
    assert event.type == "todo/write"
    assert event.model_dump(mode="json")["data"] == todos
    assert session.fork().events[-2] == event


def test_a_seed_marker_may_sit_inside_an_open_turn() -> None:
    session = Session.create()
    start_turn(session)
    session.append("session/end-seed", {})
    assert session.open_turn == 1


def test_compaction_events_and_a_checkpoint_may_come_between_turns() -> None:
    session, done = _between_turns()
    start = session.append("compaction/start", {"compactionId": "c", "turn": None})
    summary = session.append(
        "compaction/summary",
        {
            "compactionId": "c",
            "summary": [{"type": "text", "text": "so far"}],
            "shadowedRange": {"start": done.prompt.seq, "end": done.answer.seq},
            "shadowedSeqs": [done.prompt.seq, done.result.seq, done.answer.seq],
            "shadowedTokenCount": 9,
            "provider": "test",
            "model": "m",
        },
    )
    shadowed = [done.prompt.seq, done.request.seq, done.result.seq, done.answer.seq]
    session.append(
        "user/message",
        user("checkpoint"),
        surface_op=Replace(start=done.prompt.seq, end=done.answer.seq),
        source_event_seqs=[start.seq, summary.seq, *shadowed],
    )
    session.append("compaction/end", {"compactionId": "c", "turn": None})
    assert [m.role for m in session.derive_messages()] == ["user"]


def test_a_turn_aborted_for_a_legacy_cause_ends_the_turn() -> None:
    session = Session.create()
    start_turn(session)
    session.append("step/end", {"turn": 1, "step": 1})
    end = session.append(
        "turn/end", {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "legacy"}}}
    )
    assert end.data.reason.reason.kind == "legacy"  # type: ignore[union-attr]
