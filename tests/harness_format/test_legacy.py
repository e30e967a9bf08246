"""The pre-identity log migrates to the harness's identified events and ids."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_session._harness_format import migrate_legacy_events, read_plain_log
from dsh_session.errors import LegacyRecordError

from .fixtures import SCENARIOS, TS_LOGS, expected_session

LEGACY = TS_LOGS / "crash" / "jsonl-plain" / "_no-cwd" / "legacy-pre-identity" / "session.jsonl"
USER = {"kind": "user"}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def _migrated() -> list[dict[str, object]]:
    return migrate_legacy_events(read_plain_log(LEGACY.read_bytes()).events, "legacy-pre-identity")


def test_the_legacy_log_migrates_to_identified_events() -> None:
    assert _migrated() == [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {
            "type": "user/message",
            "seq": 1,
            "time": 2,
            "data": {
                "content": text("old question"),
                "source": USER,
                "id": "legacy-message:legacy-pre-identity:1",
                "role": "user",
            },
            "surfaceOp": "append",
        },
        {"type": "step/start", "seq": 2, "time": 3, "data": {"turn": 1, "step": 1}},
        {
            "type": "assistant/message",
            "seq": 3,
            "time": 4,
            "data": {
                "turn": 1,
                "step": 1,
                "message": {
                    "id": "legacy-message:legacy-pre-identity:3",
                    "role": "assistant",
                    "content": text("old answer"),
                    "source": {"provider": "mock", "model": "mock", "kind": "model"},
                },
            },
            "surfaceOp": "append",
        },
        {
            "type": "user/message",
            "seq": 4,
            "time": 5,
            "data": {
                "content": text("old steering"),
                "source": USER,
                "id": "legacy-message:legacy-pre-identity:4",
                "role": "user",
            },
            "surfaceOp": "append",
        },
        {"type": "step/end", "seq": 5, "time": 6, "data": {"turn": 1, "step": 1}},
        {
            "type": "turn/end",
            "seq": 6,
            "time": 7,
            "data": {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "disposed"}}},
        },
    ]


def test_migrating_twice_changes_nothing() -> None:
    assert migrate_legacy_events(_migrated(), "legacy-pre-identity") == _migrated()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_current_logs_pass_through_unchanged(scenario: str) -> None:
    events = expected_session(scenario)["events"]
    assert migrate_legacy_events(events, scenario) == events


def test_a_legacy_tool_result_replace_inherits_the_replaced_id() -> None:
    events = [
        {
            "type": "tool/result",
            "seq": 7,
            "time": 1,
            "surfaceOp": "append",
            "data": {"turn": 1, "step": 1, "callId": "c", "content": [], "isError": False},
        },
        {
            "type": "tool/result",
            "seq": 8,
            "time": 2,
            "surfaceOp": {"op": "replace", "start": 7, "end": 7},
            "data": {"turn": 1, "step": 1, "callId": "c", "content": [], "isError": False},
        },
    ]
    first, second = migrate_legacy_events(events, "s")
    assert first["data"]["message"]["id"] == "legacy-message:s:7"
    assert second["data"]["message"]["id"] == "legacy-message:s:7"
    assert second["data"]["message"]["source"] == {"kind": "tool", "callId": "c"}


@pytest.mark.parametrize(
    ("reason", "current"),
    [
        ({"kind": "aborted"}, {"kind": "aborted", "reason": {"kind": "legacy"}}),
        (
            {"kind": "error", "step": 1, "message": "m"},
            {"kind": "error", "error": {"message": "m", "code": "UNKNOWN"}},
        ),
        (
            {
                "kind": "error",
                "step": 1,
                "failure": {"message": "m", "code": "RATE_LIMIT", "status": 429},
            },
            {"kind": "error", "error": {"message": "m", "code": "RATE_LIMIT", "status": 429}},
        ),
    ],
)
def test_old_turn_end_reasons_map_to_current_ones(
    reason: dict[str, Any], current: dict[str, Any]
) -> None:
    [event] = migrate_legacy_events(
        [{"type": "turn/end", "seq": 0, "time": 0, "data": {"turn": 1, "reason": reason}}], "s"
    )
    assert event["data"]["reason"] == current


def test_a_malformed_legacy_record_is_refused_with_its_seq() -> None:
    bad = {
        "type": "steering/message",
        "seq": 9,
        "time": 0,
        "data": {"turn": 1, "content": [], "extra": 1},
    }
    with pytest.raises(LegacyRecordError) as caught:
        migrate_legacy_events([bad], "s")
    assert caught.value.seq == 9
