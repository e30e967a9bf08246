"""parse_events maps a list of rows straight onto the validator: it must accept exactly
what validating row by row accepts, stop at the same first bad row and name it as that
row alone would be named; and it leaves what it built in the collector's oldest
generation without touching objects the process froze itself."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from dsh_session import Session, SessionError, SessionEventAdapter, parse_events
from dsh_session._parse import RawEvent, _diagnose

from .support import tool_turn


class Text(str):
    """A str subclass: validated as JSON text, like any str."""


def one_by_one(rows: list[Any]) -> list[Any] | tuple[type[SessionError], str, Any, Any]:
    """The reference: each row validated on its own, in order; at the first failure,
    the error that row names at its position (as type, message, seq, field)."""
    events = []
    for position, item in enumerate(rows):
        try:
            if isinstance(item, (str, bytes)):
                events.append(SessionEventAdapter.validate_json(item))
            else:
                events.append(SessionEventAdapter.validate_python(item))
        except ValidationError:
            return described(_diagnose(item, position))
    return events


def described(error: SessionError) -> tuple[type[SessionError], str, Any, Any]:
    return type(error), str(error), getattr(error, "seq", None), getattr(error, "field", None)


def batch(rows: list[Any]) -> list[Any] | tuple[type[SessionError], str, Any, Any]:
    try:
        return parse_events(rows)
    except SessionError as error:
        return described(error)


def good_lines() -> list[str]:
    session = Session.create()
    tool_turn(session)
    tool_turn(session, "call-2")
    return [event.model_dump_json() for event in session.events]


def event(seq: Any, **changes: Any) -> dict[str, Any]:
    return {"type": "turn/start", "seq": seq, "time": 0, "data": {"turn": 1}, **changes}


# Each makes the row for a position: a bad row, or a good row of an unusual kind.
ROWS: dict[str, Callable[[int, str], Any]] = {
    "truncated JSON": lambda seq, line: line[:20],
    "truncated JSON bytes": lambda seq, line: line.encode()[:25],
    "empty text": lambda seq, line: "",
    "a JSON array": lambda seq, line: "[1, 2]",
    "a JSON string": lambda seq, line: '"turn/start"',
    "an invalid field, seq readable": lambda seq, line: json.dumps(event(seq, data={"turn": "x"})),
    "an invalid field, seq unreadable": lambda seq, line: json.dumps(event("x")),
    "a bool seq": lambda seq, line: json.dumps(event(True)),
    "a negative seq": lambda seq, line: json.dumps(event(-1)),
    "an unknown field": lambda seq, line: json.dumps(event(seq, extra=1)),
    "an unknown type": lambda seq, line: json.dumps(event(seq, type="agent/teleport")),
    "an ignorable unknown type": lambda seq, line: json.dumps(
        event(seq, type="plugin/note", ignorable=True)
    ),
    "no type": lambda seq, line: json.dumps({"seq": seq, "time": 0, "data": {}}),
    "a lone surrogate": lambda seq, line: json.dumps(
        {**json.loads(line), "type": "plugin/\udc80", "ignorable": True}
    ),
    "invalid UTF-8 bytes": lambda seq, line: line.encode().replace(b"{", b"{\xff", 1),
    "a parsed mapping": lambda seq, line: json.loads(line),
    "a bad parsed mapping": lambda seq, line: event(seq, time=-1),
    "a parsed list": lambda seq, line: [json.loads(line)],
    "bytes": lambda seq, line: line.encode(),
    "a bytearray": lambda seq, line: bytearray(line.encode()),
    "a str subclass": lambda seq, line: Text(line),
    "None": lambda seq, line: None,
}


@pytest.mark.parametrize("kind", list(ROWS))
@pytest.mark.parametrize("where", ["first", "middle", "last", "alone"])
def test_batch_answers_as_row_by_row(kind: str, where: str) -> None:
    lines = good_lines()
    position = {"first": 0, "middle": len(lines) // 2, "last": len(lines) - 1, "alone": 0}[where]
    rows: list[Any] = [lines[position]] if where == "alone" else list(lines)
    rows[position] = ROWS[kind](position, lines[position])
    if where != "alone":
        rows.append(rows[position])  # a second bad row after the first: not the one named
    assert batch(rows) == one_by_one(rows)


@pytest.mark.parametrize("first", list(ROWS))
@pytest.mark.parametrize("second", ["bytes", "a parsed mapping", "a str subclass", "a bytearray"])
def test_mixed_kinds_answer_as_row_by_row(first: str, second: str) -> None:
    lines = good_lines()
    rows: list[RawEvent] = [
        ROWS[first](0, lines[0]),
        ROWS[second](1, lines[1]),
        *lines[2:],
    ]
    assert batch(rows) == one_by_one(rows)


def test_a_tuple_or_an_iterator_answers_as_a_list() -> None:
    lines = good_lines()
    lines[3] = lines[3][:10]
    expected = batch(lines)
    assert isinstance(expected, tuple)
    assert batch(tuple(lines)) == batch(iter(lines)) == expected  # type: ignore[arg-type]


_OLDEST_CHECK = """
import gc, json, sys
from dsh_session import parse_events
events = parse_events(json.loads(sys.stdin.read()))
oldest = {id(obj) for obj in gc.get_objects(generation=2)}
print(gc.isenabled() and all(id(event) in oldest for event in events))
"""


def test_the_events_built_are_in_the_oldest_generation() -> None:
    """In a fresh interpreter: the collector's state is the process's, and a thread an
    earlier test left (a reader pausing the collector) would change it meanwhile."""
    checked = subprocess.run(
        [sys.executable, "-c", _OLDEST_CHECK],
        input=json.dumps(good_lines()),
        capture_output=True,
        text=True,
        check=True,
    )
    assert checked.stdout.strip() == "True"


def test_objects_the_process_froze_stay_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        parse_events(good_lines())
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        parse_events(good_lines())
        assert not gc.isenabled()
    finally:
        gc.enable()
