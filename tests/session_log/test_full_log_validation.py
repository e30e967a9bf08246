"""Loading a stored log: parse_events validates raw events in bulk, Session.from_log
checks the whole log; damage is a SessionCorruptError, an unreadable format a
SessionFormatError, each naming the seq."""

from __future__ import annotations

import gc
import json

import pytest

from dsh_session import (
    Session,
    SessionCorruptError,
    SessionFormatError,
    SessionValidationError,
    UnknownEvent,
    parse_events,
)

from .support import request_calls, start_turn, tool_turn


def stored_lines(session: Session) -> list[str]:
    return [event.model_dump_json() for event in session.events]


def sample_session() -> Session:
    session = Session.create()
    tool_turn(session)
    tool_turn(session, "call-2")
    return session


def test_a_stored_log_loads_back_equal() -> None:
    session = sample_session()
    events = parse_events(stored_lines(session))
    loaded = Session.from_log(session.header, events)
    assert list(loaded.events) == list(session.events)
    assert [m.id for m in loaded.derive_messages()] == [m.id for m in session.derive_messages()]
    assert loaded.last_turn == 2


def test_parse_events_accepts_bytes_and_parsed_mappings() -> None:
    session = sample_session()
    lines = stored_lines(session)
    mixed = [lines[0].encode(), json.loads(lines[1]), *lines[2:]]
    assert parse_events(mixed) == list(session.events)


def test_loaded_history_holds_the_objects_of_the_loaded_events() -> None:
    session = sample_session()
    loaded = Session.from_log(session.header, parse_events(stored_lines(session)))
    assert loaded.derive_messages()[0] is loaded.events[2].data


def test_a_gap_in_seq_is_corruption_naming_the_seq() -> None:
    session = sample_session()
    events = parse_events(stored_lines(session))
    del events[4]
    with pytest.raises(SessionCorruptError, match="gap") as corrupt:
        Session.from_log(session.header, events)
    assert corrupt.value.seq == 4


def test_a_log_not_starting_at_zero_is_corruption() -> None:
    session = sample_session()
    events = parse_events(stored_lines(session))[1:]
    with pytest.raises(SessionCorruptError) as corrupt:
        Session.from_log(session.header, events)
    assert corrupt.value.seq == 0


def test_a_broken_turn_structure_is_corruption_not_a_validation_error() -> None:
    session = sample_session()
    lines = stored_lines(session)
    del lines[-1]  # the last turn/end ...
    lines.append(lines[-1].replace(f'"seq":{len(lines) - 1}', f'"seq":{len(lines)}'))
    events = parse_events(lines)  # ... replaced by a second step/end
    with pytest.raises(SessionCorruptError) as corrupt:
        Session.from_log(session.header, events)
    assert not isinstance(corrupt.value, SessionValidationError)
    assert corrupt.value.seq == len(lines) - 1
    assert corrupt.value.field == "type"


def test_from_log_does_not_repair_or_append() -> None:
    session = Session.create()
    turn, _ = start_turn(session)
    request_calls(session, turn, 1, "c")
    loaded = Session.from_log(session.header, parse_events(stored_lines(session)))
    assert loaded.seq == session.seq
    assert loaded.open_turn == turn


def test_an_unknown_event_type_is_a_format_error_naming_type_and_seq() -> None:
    session = sample_session()
    lines = stored_lines(session)
    lines[3] = json.dumps({"type": "agent/teleport", "seq": 3, "time": 0, "data": {}})
    with pytest.raises(SessionFormatError, match="agent/teleport") as refused:
        parse_events(lines)
    assert refused.value.event_type == "agent/teleport"
    assert refused.value.seq == 3


def test_an_ignorable_unknown_event_is_kept_and_the_log_loads() -> None:
    session = Session.create()
    tool_turn(session)
    lines = stored_lines(session)
    note = {
        "type": "plugin/note",
        "seq": len(lines),
        "time": 0,
        "data": {"n": 1},
        "ignorable": True,
    }
    events = parse_events([*lines, json.dumps(note)])
    assert isinstance(events[-1], UnknownEvent)
    loaded = Session.from_log(session.header, events)
    assert str(loaded.events[-1].type) == "plugin/note"
    assert loaded.events[-1].model_dump(mode="json") == note


def test_an_invalid_payload_is_corruption_naming_seq_and_field() -> None:
    session = sample_session()
    lines = stored_lines(session)
    lines[0] = json.dumps({"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": "one"}})
    with pytest.raises(SessionCorruptError) as corrupt:
        parse_events(lines)
    assert corrupt.value.seq == 0
    assert corrupt.value.field == "data.turn"


def test_a_line_that_is_not_json_is_corruption_at_its_position() -> None:
    session = sample_session()
    lines = stored_lines(session)
    lines[5] = lines[5][:20]
    with pytest.raises(SessionCorruptError, match="not JSON") as corrupt:
        parse_events(lines)
    assert corrupt.value.seq == 5


def test_parse_events_restores_the_garbage_collector_even_on_error() -> None:
    assert gc.isenabled()
    with pytest.raises(SessionCorruptError):
        parse_events(["{not json"])
    assert gc.isenabled()
    parse_events(stored_lines(sample_session()))
    assert gc.isenabled()


def test_parse_events_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        parse_events(stored_lines(sample_session()))
        assert not gc.isenabled()
    finally:
        gc.enable()
