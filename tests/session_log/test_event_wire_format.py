"""Events dump to exactly the wire shape and come back equal, for every event type."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from dsh_llm import FrozenDict
from dsh_session import (
    EVENT_TYPES,
    EndSeedEvent,
    InboxSplicedEvent,
    SessionEvent,
    SessionEventAdapter,
    TurnStartEvent,
    UnknownEvent,
)
from dsh_session.events import EVENT_CLASSES

from .events_catalog import every_event


@pytest.mark.parametrize("event", every_event(), ids=lambda event: f"{event.seq}-{event.type}")
def test_every_event_round_trips_through_json(event: SessionEvent) -> None:
    text = event.model_dump_json()
    back = SessionEventAdapter.validate_json(text)
    assert type(back) is type(event)
    assert back == event
    assert back.model_dump_json() == text


def test_the_envelope_is_type_seq_time_data_then_the_optional_keys_in_camel_case() -> None:
    by_type = {event.type: event for event in every_event()}
    surface = json.loads(by_type["tool/result"].model_dump_json())
    assert list(surface) == ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"]
    assert surface["surfaceOp"] == {"op": "replace", "start": 7, "end": 7}
    plain = json.loads(by_type["turn/start"].model_dump_json())
    assert list(plain) == ["type", "seq", "time", "data"]


def test_payload_fields_are_camel_case_on_the_wire() -> None:
    by_type = {event.type: event for event in every_event()}
    call = json.loads(by_type["tool/call"].model_dump_json())["data"]
    assert set(call) == {"turn", "step", "callId", "name", "arguments"}
    header = json.loads(by_type["request/header"].model_dump_json())["data"]["header"]
    assert header["config"] == {
        "provider": "test",
        "model": "test-model",
        "maxTokens": 100,
        "reasoningEffort": "high",
        "seed": 7,
    }


def test_unset_optional_fields_are_omitted_not_null() -> None:
    event = TurnStartEvent(seq=0, time=0, data={"turn": 1})
    assert "null" not in event.model_dump_json()
    assert EndSeedEvent(seq=3, time=5).model_dump(mode="json") == {
        "type": "session/end-seed",
        "seq": 3,
        "time": 5,
        "data": {},
    }


def test_a_splice_that_removed_nothing_omits_removed_count() -> None:
    event = InboxSplicedEvent(
        seq=0, time=0, data={"target": "next-step", "start": 0, "removedCount": 0}
    )
    assert event.data.removed_count is None
    assert "removedCount" not in event.model_dump_json()


def test_an_ignorable_unknown_event_is_kept_with_frozen_data() -> None:
    event = SessionEventAdapter.validate_json(
        '{"type":"plugin/note","seq":4,"time":9,"data":{"a":[1,{"b":2}]},"ignorable":true}'
    )
    assert isinstance(event, UnknownEvent)
    assert isinstance(event.data, FrozenDict)
    assert event.data["a"] == (1, {"b": 2})
    with pytest.raises(TypeError):
        event.data["a"] = 1


def test_an_unknown_event_without_ignorable_is_refused() -> None:
    with pytest.raises(ValidationError):
        SessionEventAdapter.validate_python(
            {"type": "plugin/note", "seq": 0, "time": 0, "data": {}}
        )


def test_a_known_type_cannot_pass_as_an_ignorable_unknown_event() -> None:
    with pytest.raises(ValidationError):
        SessionEventAdapter.validate_python(
            {"type": "turn/start", "seq": 0, "time": 0, "data": {}, "ignorable": True}
        )


def test_the_session_event_base_dispatches_on_type() -> None:
    event = SessionEvent.model_validate(
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}
    )
    assert type(event) is TurnStartEvent
    with pytest.raises(TypeError, match="abstract"):
        SessionEvent(type="turn/start", seq=0, time=0, data={"turn": 1})


def test_events_are_frozen() -> None:
    event = TurnStartEvent(seq=0, time=0, data={"turn": 1})
    with pytest.raises(ValidationError):
        event.seq = 1  # type: ignore[misc]


def test_every_known_type_has_an_event_class() -> None:
    assert set(EVENT_CLASSES) == EVENT_TYPES
