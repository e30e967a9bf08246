"""The session header and session ids."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from dsh_session import (
    SessionCorruptError,
    SessionFormatError,
    SessionHeader,
    SessionValidationError,
    new_session_id,
    parse_header,
    validate_session_id,
)


@pytest.mark.parametrize("good", ["a", "A-b_c.9", "x" * 128, "..."])
def test_file_safe_ids_are_accepted(good: str) -> None:
    assert validate_session_id(good) == good
    assert SessionHeader(id=good, created_at=0).id == good


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "a\\b", "x" * 129, "é", "a b", "ab\n", 7])
def test_ids_that_cannot_name_a_file_are_refused(bad: object) -> None:
    with pytest.raises(SessionValidationError) as refused:
        validate_session_id(bad)
    assert refused.value.field == "id"
    with pytest.raises(ValidationError):
        SessionHeader(id=bad, created_at=0)


def test_minted_ids_are_unique_time_ordered_and_file_safe() -> None:
    ids = [new_session_id() for _ in range(1000)]
    assert len(set(ids)) == 1000
    assert ids == sorted(ids)
    assert all(validate_session_id(i) == i for i in ids[:10])


def test_the_header_dumps_its_wire_shape_without_unset_fields() -> None:
    header = SessionHeader(id="s1", created_at=5, parent_session="p", seed_length=3)
    assert json.loads(header.model_dump_json()) == {
        "version": 0,
        "id": "s1",
        "createdAt": 5,
        "parentSession": "p",
        "seedLength": 3,
    }


def test_parse_header_accepts_the_jsonl_header_line_and_keeps_unknown_fields() -> None:
    line = '{"type":"session","version":0,"id":"s1","createdAt":5,"origin":"subagent"}'
    header = parse_header(line)
    assert header.id == "s1"
    assert header.model_extra == {"origin": "subagent"}
    assert json.loads(header.model_dump_json())["origin"] == "subagent"


def test_a_newer_format_version_is_a_format_error() -> None:
    with pytest.raises(SessionFormatError, match="newer"):
        parse_header({"version": 1, "id": "s1", "createdAt": 5})


def test_an_unknown_older_format_version_has_no_upgrade_path() -> None:
    with pytest.raises(SessionFormatError, match="no upgrade path"):
        parse_header({"version": -1, "id": "s1", "createdAt": 5})


@pytest.mark.parametrize(
    "damaged",
    [
        '{"version":0',
        "[]",
        '{"version":0,"id":"../x","createdAt":5}',
        '{"type":"event","version":0}',
    ],
)
def test_a_damaged_header_is_corruption(damaged: str) -> None:
    with pytest.raises(SessionCorruptError):
        parse_header(damaged)
