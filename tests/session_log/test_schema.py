"""The exported JSON Schemas (draft 2020-12) accept real dumps and reject invalid
documents, as the pydantic models do."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from dsh_llm._schema import DRAFT_2020_12
from dsh_session import Session, SessionHeader, wire_schemas

from .events_catalog import every_event
from .support import tool_turn


@pytest.fixture(scope="module")
def schemas() -> dict[str, dict[str, Any]]:
    return wire_schemas()


def validator(schemas: dict[str, dict[str, Any]], name: str) -> Draft202012Validator:
    schema = schemas[name]
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_every_schema_declares_draft_2020_12(schemas: dict[str, dict[str, Any]]) -> None:
    assert {"SessionHeader", "SessionEvent", "TurnEndData", "ToolResultData"} <= set(schemas)
    for schema in schemas.values():
        assert schema["$schema"] == DRAFT_2020_12
        Draft202012Validator.check_schema(schema)


def test_dumps_of_every_event_type_validate(schemas: dict[str, dict[str, Any]]) -> None:
    events = validator(schemas, "SessionEvent")
    for event in every_event():
        events.validate(json.loads(event.model_dump_json()))


def test_dumps_of_a_real_session_validate(schemas: dict[str, dict[str, Any]]) -> None:
    session = Session.create(header=SessionHeader(id="s", created_at=1, cwd="/w"))
    tool_turn(session)
    fork = session.fork()
    events = validator(schemas, "SessionEvent")
    for event in fork.events:
        events.validate(json.loads(event.model_dump_json()))
    validator(schemas, "SessionHeader").validate(json.loads(fork.header.model_dump_json()))


def test_payload_schemas_validate_payload_dumps(schemas: dict[str, dict[str, Any]]) -> None:
    by_type = {event.type: event for event in every_event()}
    payload = json.loads(by_type["tool/result"].model_dump_json())["data"]
    validator(schemas, "ToolResultData").validate(payload)


INVALID_EVENTS = {
    "no data": {"type": "turn/start", "seq": 0, "time": 0},
    "payload of another type": {"type": "turn/start", "seq": 0, "time": 0, "data": {"step": 1}},
    "negative seq": {"type": "turn/start", "seq": -1, "time": 0, "data": {"turn": 1}},
    "surfaceOp on a non-surface event": {
        "type": "turn/start",
        "seq": 0,
        "time": 0,
        "data": {"turn": 1},
        "surfaceOp": "append",
    },
    "unknown type not ignorable": {"type": "x/y", "seq": 0, "time": 0, "data": {}},
    "known type posing as unknown": {
        "type": "turn/start",
        "seq": 0,
        "time": 0,
        "data": {},
        "ignorable": True,
    },
    "unknown turn-end reason": {
        "type": "turn/end",
        "seq": 0,
        "time": 0,
        "data": {"turn": 1, "reason": {"kind": "exploded"}},
    },
}


@pytest.mark.parametrize("case", list(INVALID_EVENTS))
def test_invalid_events_are_rejected_by_the_schema(
    schemas: dict[str, dict[str, Any]], case: str
) -> None:
    assert not validator(schemas, "SessionEvent").is_valid(INVALID_EVENTS[case])


def test_surface_events_without_surface_op_are_rejected(schemas: dict[str, dict[str, Any]]) -> None:
    by_type = {event.type: event for event in every_event()}
    document = json.loads(by_type["user/message"].model_dump_json())
    del document["surfaceOp"]
    assert not validator(schemas, "SessionEvent").is_valid(document)


@pytest.mark.parametrize(
    "header",
    [
        {"version": 1, "id": "s", "createdAt": 0},
        {"version": 0, "id": "a/b", "createdAt": 0},
        {"version": 0, "id": "..", "createdAt": 0},
        {"version": 0, "id": "s"},
    ],
)
def test_invalid_headers_are_rejected_by_the_schema(
    schemas: dict[str, dict[str, Any]], header: dict[str, Any]
) -> None:
    assert not validator(schemas, "SessionHeader").is_valid(header)
