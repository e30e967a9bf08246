"""The acceptance test: every log the TypeScript harness wrote, in every form, reads
through dsh to what the harness itself held, derived and sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness_format.fixtures import JSONL_FORMS, SCENARIOS, TS_LOGS, artifact

from dsh_agent import reconstruct_requests
from dsh_session import CompactionSummaryEvent, LogEvent, Session, SessionHeader, parse_events
from dsh_session._harness_format import find_session, read_session, session_header
from dsh_session._repair import interrupted_turn_closers


def _expected(scenario: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((TS_LOGS / "expected" / f"{scenario}.json").read_text())
    return document


def _load(root: Path, session_id: str) -> tuple[dict[str, Any], list[LogEvent]]:
    folder = find_session(root, session_id)
    assert folder is not None, f"{session_id} is not listed under {root}"
    log = read_session(root, folder)
    assert log.torn is None
    return log.header, parse_events(log.events)


def _wire(value: Any) -> Any:
    return json.loads(value.__pydantic_serializer__.to_json(value))


CASES = [(form, scenario) for form in JSONL_FORMS for scenario in SCENARIOS]


@pytest.mark.parametrize(("form", "scenario"), CASES)
def test_events_ids_messages_and_requests_equal_the_harness(form: str, scenario: str) -> None:
    expected = _expected(scenario)
    [held] = expected["sessions"]
    header, events = _load(TS_LOGS / form, scenario)
    assert [_wire(event) for event in events] == held["events"]

    session = Session.from_log(SessionHeader.model_validate(session_header(header)), events)
    messages = [_wire(message) for message in session.derive_messages()]
    assert [message["id"] for message in messages] == held["derivedMessageIds"]
    assert messages == held["derivedMessages"]

    rebuilt = [_wire(request) for request in reconstruct_requests(events)]
    assert rebuilt == _step_requests(expected["requests"], events)


def _step_requests(received: list[dict[str, Any]], events: list[LogEvent]) -> list[Any]:
    """What the adapter received for agent steps, in the expected file's shape minus
    its ``sessionId``. A compaction's own summarizing call is not a step request (its
    prompt is the compaction plugin's, not in the log); the log records it as the
    ``compaction/summary`` that names its provider, model and token limit."""
    summaries = [event.data for event in events if isinstance(event, CompactionSummaryEvent)]
    steps = []
    for request in received:
        if any(
            summary.llm_stream_call
            and (request["provider"], request["model"], request.get("maxTokens"))
            == (summary.provider, summary.model, summary.max_tokens)
            for summary in summaries
        ):
            continue
        steps.append({key: value for key, value in request.items() if key != "sessionId"})
    assert len(steps) == len(received) - len(summaries)
    return steps


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_harness_event_dumps_back_to_the_bytes_it_wrote(scenario: str) -> None:
    """The events dsh adds to its vocabulary (typed or foreign) re-dump byte for byte;
    the core types compare as JSON values above (message key order is dsh's own)."""
    raw = artifact("jsonl-unpacked", scenario).read_bytes().splitlines()[1:]
    checked = 0
    for line, event in zip(raw, parse_events(raw), strict=True):
        if event.type.startswith(("compaction/", "llm/", "approval/")):
            assert event.__pydantic_serializer__.to_json(event) == line
            checked += 1
    assert checked == (4 if scenario == "compaction" else 0)


@pytest.mark.parametrize("form", JSONL_FORMS)
def test_the_crash_cut_repairs_to_the_harness_closers(form: str) -> None:
    _, events = _load(TS_LOGS / "crash" / form, "crash-tool-call")
    closers = interrupted_turn_closers(events)
    time = events[-1].time
    assert [(c.type, c.seq, c.time) for c in closers] == [
        ("tool/result", 24, time),
        ("tool/result", 25, time),
        ("step/end", 26, time),
        ("turn/end", 27, time),
    ]
    started, not_started = (_wire(c)["data"] for c in closers[:2])
    assert started["message"]["id"] == "interrupted-tool-result-call_1-24"
    assert started["error"] == {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert closers[0].source_event_seqs == (23,)
    assert not_started["message"]["id"] == "interrupted-tool-result-call_2-25"
    assert not_started["error"] == {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    assert closers[1].source_event_seqs is None
    assert _wire(closers[3])["data"] == {"turn": 1, "reason": {"kind": "interrupted"}}
    header, _ = _load(TS_LOGS / "crash" / form, "crash-tool-call")
    Session.from_log(SessionHeader.model_validate(session_header(header)), [*events, *closers])


def test_the_legacy_log_migrates_to_the_harness_ids_then_parses() -> None:
    header, events = _load(TS_LOGS / "crash" / "jsonl-plain", "legacy-pre-identity")
    session = Session.from_log(SessionHeader.model_validate(session_header(header)), events)
    ids = [message.id for message in session.derive_messages()]
    assert ids and all(i.startswith("legacy-message:legacy-pre-identity:") for i in ids)
