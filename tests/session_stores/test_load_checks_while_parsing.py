"""What a load relies on when it checks the log rules while it validates the rows
(``parse_log``, docs/decisions/2026-12-06-load-checks-while-parsing.md): it refuses
exactly what the two separate passes refused, and the attachment scan it skips could
have found nothing."""

from __future__ import annotations

import json

import pytest

from dsh_llm import FileBlock, TextBlock, create_tool_result_message, create_user_message
from dsh_llm._attachments import attachment_ref
from dsh_session._parse import parse_events, parse_log
from dsh_session._session import Session
from dsh_session.errors import SessionCorruptError
from dsh_session.stores._recovery import StoredLog, restore_session

MODEL = {"provider": "test", "model": "scripted"}


def _rows(session: Session) -> list[str]:
    return [event.model_dump_json(by_alias=True, exclude_none=True) for event in session.events]


def _session(result_content: object = "ok") -> Session:
    from dsh_llm import ToolCallBlock, create_assistant_message

    session = Session.create("s")
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("user/message", create_user_message(content="hi", source={"kind": "user"}))
    call = ToolCallBlock(call_id="c1", name="read", arguments="{}")
    message = create_assistant_message(content=[TextBlock(text="x"), call], source=MODEL)
    session.append("assistant/message", {"turn": 1, "step": 1, "message": message})
    result = create_tool_result_message(call_id="c1", content=result_content)  # type: ignore[arg-type]
    session.append("tool/result", {"turn": 1, "step": 1, "message": result})
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return session


def test_a_valid_log_comes_with_its_checked_session() -> None:
    session = _session()
    events, built = parse_log(session.header, _rows(session))
    assert built is not None
    assert list(built.events) == events == list(session.events)
    assert built.derive_messages() == session.derive_messages()
    assert restore_session(session.header, events, built=built) is built


def test_a_broken_rule_drops_the_session_and_restore_raises_as_before() -> None:
    session = _session()
    rows = _rows(session)
    wrong = json.loads(rows[1])
    wrong["data"]["step"] = 2  # step/start 2 where step 1 is next
    rows[1] = json.dumps(wrong)
    events, built = parse_log(session.header, rows)
    assert built is None
    assert events == parse_events(rows)
    with pytest.raises(SessionCorruptError) as before:
        Session.from_log(session.header, events)
    with pytest.raises(SessionCorruptError) as now:
        restore_session(session.header, events, built=built)
    assert str(now.value) == str(before.value)
    assert now.value.seq == before.value.seq == 1


def test_a_malformed_row_after_a_broken_rule_is_what_is_reported() -> None:
    session = _session()
    rows = _rows(session)
    wrong = json.loads(rows[1])
    wrong["data"]["step"] = 2
    rows[1] = json.dumps(wrong)
    rows[5] = rows[5][:-7]  # not JSON
    with pytest.raises(SessionCorruptError) as before:
        parse_events(rows)
    with pytest.raises(SessionCorruptError) as now:
        parse_log(session.header, rows)
    assert str(now.value) == str(before.value)
    assert now.value.seq == 5


def test_a_gap_drops_the_session() -> None:
    session = _session()
    rows = _rows(session)
    del rows[2]
    events, built = parse_log(session.header, rows)
    assert built is None
    with pytest.raises(SessionCorruptError, match="gap"):
        restore_session(session.header, events, built=built)


def test_an_attachment_inside_a_tool_result_is_still_found() -> None:
    ref = attachment_ref(b"%PDF-1.4 test", media_type="application/pdf", name="a.pdf")
    session = _session(result_content=[FileBlock(attachment=ref)])
    events, built = parse_log(session.header, _rows(session))
    assert built is not None
    found = StoredLog(session.header, events, session=built).attachments()
    assert [found_ref for _, found_ref in found] == [ref]


def test_a_log_of_text_and_tool_calls_needs_no_scan() -> None:
    session = _session()
    events, built = parse_log(session.header, _rows(session))
    assert built is not None
    assert not built._state.surface.may_hold_attachments
    assert StoredLog(session.header, events, session=built).attachments() == []
