"""The JSONL header line: every field the harness writes, required ones enforced."""

from __future__ import annotations

import pytest

from dsh_session._harness_format import header_line, parse_header_line
from dsh_session.errors import HeaderLineError, SessionFormatError

from .fixtures import SCENARIOS, artifact


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_harness_header_line_is_rewritten_byte_for_byte(scenario: str) -> None:
    first = artifact("jsonl-plain", scenario).read_bytes().split(b"\n", 1)[0]
    assert header_line(parse_header_line(first)).encode() == first


def test_all_optional_fields_are_written_in_the_harness_order() -> None:
    header = {
        "agentPreset": "coder",
        "delegationDepth": 2,
        "origin": "subagent",
        "seedLength": 4,
        "parentSession": "p",
        "cwd": "/w",
        "createdAt": 5,
        "id": "s",
        "version": 0,
    }
    assert header_line(header) == (
        '{"type":"session","version":0,"id":"s","createdAt":5,"cwd":"/w","parentSession":"p",'
        '"seedLength":4,"origin":"subagent","delegationDepth":2,"agentPreset":"coder"}'
    )


def test_a_missing_delegation_depth_is_written_as_zero() -> None:
    assert header_line({"version": 0, "id": "s", "createdAt": 1}).endswith('"delegationDepth":0}')


def test_unknown_header_fields_are_kept_after_the_known_ones() -> None:
    line = b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0,"x":[1]}'
    assert header_line(parse_header_line(line)).encode() == line


@pytest.mark.parametrize(
    ("line", "field"),
    [
        (b'{"type":"session","version":0,"id":"s","createdAt":1}', "delegationDepth"),
        (
            b'{"type":"session","version":0,"id":"s","createdAt":-1,"delegationDepth":0}',
            "createdAt",
        ),
        (b'{"type":"session","version":0,"id":"","createdAt":1,"delegationDepth":0}', "id"),
        (b'{"type":"event","version":0,"id":"s","createdAt":1,"delegationDepth":0}', "type"),
        (
            b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0,"origin":"x"}',
            "origin",
        ),
        (
            b'{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0,"sandboxMode":1}',
            "sandboxMode",
        ),
        (b"not json", "type"),
    ],
)
def test_a_header_the_harness_refuses_is_refused_naming_the_field(line: bytes, field: str) -> None:
    with pytest.raises(HeaderLineError) as caught:
        parse_header_line(line)
    assert caught.value.field == field


def test_another_format_version_is_a_format_error_not_corruption() -> None:
    with pytest.raises(SessionFormatError):
        parse_header_line(b'{"type":"session","version":1,"id":"s"}')
