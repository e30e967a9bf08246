"""The whole harness vocabulary: every type known, typed ones checked, all re-dumped as
the harness wrote them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh_session import (
    EVENT_TYPES,
    ForeignEvent,
    SessionCorruptError,
    SessionFormatError,
    parse_events,
)
from dsh_session._harness_format import KNOWN_SESSION_EVENT_TYPES
from harness_vocab.harness_events import FOREIGN_WIRE, TYPED_WIRE


def _line(item: dict[str, Any], seq: int, **envelope: Any) -> bytes:
    event = {"type": item["type"], "seq": seq, "time": 1_796_231_605_000 + seq}
    event.update(data=item["data"], **envelope)
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()


def test_dsh_knows_exactly_the_harness_vocabulary() -> None:
    assert EVENT_TYPES == KNOWN_SESSION_EVENT_TYPES


@pytest.mark.parametrize("ignorable", [False, True])
def test_every_added_type_dumps_back_byte_for_byte(ignorable: bool) -> None:
    envelope = {"ignorable": True} if ignorable else {}
    lines = [_line(item, seq, **envelope) for seq, item in enumerate(TYPED_WIRE + FOREIGN_WIRE)]
    events = parse_events(lines)
    assert [event.__pydantic_serializer__.to_json(event) for event in events] == lines
    foreign = [event for event in events if isinstance(event, ForeignEvent)]
    assert len(foreign) == len(FOREIGN_WIRE)


def test_an_unknown_type_without_ignorable_is_still_a_format_error() -> None:
    with pytest.raises(SessionFormatError) as refused:
        parse_events([_line({"type": "plugin/new", "data": {}}, 0)])
    assert (refused.value.event_type, refused.value.seq) == ("plugin/new", 0)


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"type": "compaction/start", "data": {"compactionId": "c"}}, "data.turn"),
        (
            {
                "type": "llm/retry",
                "data": {**TYPED_WIRE[5]["data"], "maxRetries": None},
            },
            "data",
        ),
        ({"type": "approval/decided", "data": {"id": "a", "outcome": "maybe"}}, "data.outcome"),
    ],
)
def test_a_malformed_typed_payload_is_corruption_naming_the_field(
    item: dict[str, Any], field: str
) -> None:
    with pytest.raises(SessionCorruptError) as refused:
        parse_events([_line(item, 4)])
    assert refused.value.seq == 4
    assert refused.value.field == field


def test_a_foreign_event_may_not_carry_surface_fields() -> None:
    with pytest.raises(SessionCorruptError) as refused:
        parse_events([_line(FOREIGN_WIRE[0], 0, surfaceOp="append")])
    assert refused.value.field == "surfaceOp"


def test_a_log_with_an_earlier_dsh_failure_code_still_loads() -> None:
    failure = {"message": "HTTP 429: slow down", "code": "RATE_LIMITED", "status": 429}
    item = {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error", "error": failure}}}
    [event] = parse_events([_line(item, 0)])
    assert event.__pydantic_serializer__.to_json(event) == _line(item, 0)
