"""A dsh-compacted log is one the harness reads: its compaction events have the
harness's wire shapes (same fields, same order as the harness's own compaction log),
obey the harness's compaction rules, and survive the harness's artifact format and
load checks (zstd frames, packed chunks, vocabulary)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness_format.fixtures import expected_session

from dsh_agent import AgentLoop, Compaction
from dsh_agent.compaction import SHADOWED_IDS_FIELD, PruneConfig
from dsh_llm import GenerateRequest, create_user_message
from dsh_llm.testing import FunctionAdapter
from dsh_session import Session, SessionHeader, parse_events
from dsh_session._harness_format import encode_log, find_session, log_path, read_session

from .harness_rules import violations
from .support import is_summary_request, read

PRUNE = PruneConfig(threshold_chars=800, head_chars=200, tail_chars=60)
SHAPED = ("compaction/start", "compaction/summary", "compaction/prune", "compaction/end")


def model(request: GenerateRequest) -> Any:
    from dsh_llm.testing import Reply

    if is_summary_request(request):
        return "Summary: records were read."
    last = request.messages[-1]
    if last.source.kind == "user":
        return Reply(tool_calls=({"name": "read", "arguments": {"n": 5}},))
    return "answer " * 30


async def compacted_session() -> Session:
    """Turns that prune inside a turn, summarize under pressure, and compact between
    turns (compact_now)."""
    session = Session.create()
    agent = AgentLoop(
        session=session,
        adapter=FunctionAdapter(model),
        provider="mock",
        model="mock-model",
        system="You are a scripted test agent.",
        tools=[read],
        context_window=1500,
        compaction=Compaction(
            prune=PruneConfig(threshold_chars=800, head_chars=200, tail_chars=60)
        ),
    )
    for n in range(1, 7):
        agent.followup(create_user_message(content=f"task {n} " * 30, source={"kind": "user"}))
        await agent.when_idle()
    assert await agent.compact_now() is not None
    agent.followup(create_user_message(content="continue", source={"kind": "user"}))
    await agent.when_idle()
    await agent.aclose()
    return session


def wire(session: Session) -> list[dict[str, Any]]:
    return [json.loads(e.__pydantic_serializer__.to_json(e)) for e in session.events]


def keys_by_type(events: list[dict[str, Any]]) -> dict[str, list[str]]:
    shapes: dict[str, list[str]] = {}
    for event in events:
        if event["type"] in SHAPED or event["type"] == "request/context":
            shapes.setdefault(event["type"], list(event["data"]))
        if event["type"] == "user/message" and event["data"]["source"].get("plugin") == "compact":
            shapes.setdefault("checkpoint", list(event["data"]["source"]))
    return shapes


async def test_compaction_events_have_the_harness_shapes_and_obey_its_rules() -> None:
    events = wire(await compacted_session())
    harness = expected_session("compaction")["events"]
    assert violations(harness) == []  # the restated rules accept what the harness wrote
    assert violations(events) == []
    ours, theirs = keys_by_type(events), keys_by_type(harness)
    assert set(ours) == set(theirs)
    # dsh's one extra: the checkpoint's source lists the ids it replaced, after the
    # harness's fields (tests/harness_interop shows the harness loads and resumes it)
    theirs["checkpoint"] = [*theirs["checkpoint"], SHADOWED_IDS_FIELD]
    for kind, fields in theirs.items():
        assert ours[kind] == fields, kind
    turns = {e["data"]["turn"] for e in events if e["type"] == "compaction/start"}
    assert None in turns and len(turns) >= 2  # in a turn and between turns


def test_the_restated_rules_reject_a_broken_bracket() -> None:
    harness = expected_session("compaction")["events"]
    without_end = [e for e in harness if e["type"] != "compaction/end"]
    assert violations(without_end)
    moved = [
        {**e, "data": {**e["data"], "turn": 3}} if e["type"] == "compaction/start" else e
        for e in harness
    ]
    assert violations(moved)


async def test_the_log_round_trips_through_the_harness_artifact_format(tmp_path: Path) -> None:
    session = await compacted_session()
    events = wire(session)
    header = {"version": 0, "id": session.id, "createdAt": session.header.created_at}
    path = log_path(tmp_path, None, session.id, compressed=True)
    path.parent.mkdir(parents=True)
    half = len(events) // 2
    path.write_bytes(encode_log(header, [events[:half], events[half:]]))

    folder = find_session(tmp_path, session.id)
    assert folder is not None
    log = read_session(tmp_path, folder)  # the harness's load checks, vocabulary included
    assert log.torn is None and log.events == events
    loaded = Session.from_log(SessionHeader.model_validate(log.header), parse_events(log.events))
    assert list(loaded.derive_messages()) == list(session.derive_messages())
