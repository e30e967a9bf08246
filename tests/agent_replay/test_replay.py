"""replay: a recorded conversation run again against today's code passes when nothing
the model sees changed, and names the first request, and the messages, that did."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from dsh_agent import CallNext, Enter, PreStep, ReplayError, reconstruct_requests, tool
from dsh_agent.testing import ToolMode, replay
from dsh_llm import GenerateRequest, create_user_message, replace_content
from dsh_llm.testing import FunctionAdapter
from dsh_session import (
    InboxSplicedEvent,
    Replace,
    Session,
    SqliteSessionStore,
    UserMessageEvent,
)

from .recorded import Code, add, lookup, record, scripted_model

AFTER_COMPACTION = 8
"""The request right after the recording's one summary (its pre-step compacted)."""


@pytest.fixture
async def recorded() -> Session:
    return await record()


async def test_identical_code_replays_green_with_recorded_and_live_tools(
    recorded: Session,
) -> None:
    modes: tuple[ToolMode, ...] = ("recorded", "live")
    for tools in modes:
        result = await replay(recorded, Code().factory(), tools=tools)
        assert result.ok, str(result)
        assert result.first_difference is None
        assert result.requests == result.recorded_requests == 10
        assert str(result) == "replay ok: 10 request(s) as recorded"


async def test_the_replay_keeps_every_prompt_id_and_writes_nothing_to_the_recording(
    recorded: Session,
) -> None:
    before = list(recorded.events)
    result = await replay(recorded, Code().factory())
    assert list(recorded.events) == before
    assert result.session.id != recorded.id

    def prompts(session: Session) -> list[str]:
        return [
            e.data.id
            for e in session.events
            if isinstance(e, UserMessageEvent) and e.data.source.kind == "user"
        ]

    assert prompts(result.session) == prompts(recorded)


async def test_a_changed_system_prompt_fails_the_first_request(recorded: Session) -> None:
    result = await replay(recorded, Code().but(system="You are terse.").factory())
    difference = result.first_difference
    assert not result.ok and difference is not None
    assert difference.request == 1 and difference.messages == ()
    assert difference.header == (
        "system: recorded 'You are a careful assistant. Use the tools.' != live 'You are terse.'",
    )
    assert str(difference).startswith("request 1 (recorded at seq ")


async def test_a_changed_tool_schema_fails_the_first_request(recorded: Session) -> None:
    @tool(name="lookup")
    async def lookup_v2(topic: str, language: str = "en") -> str:
        """Look a topic up in the encyclopedia."""
        return ""

    result = await replay(recorded, Code().but(tools=(lookup_v2, add)).factory())
    difference = result.first_difference
    assert difference is not None and difference.request == 1
    [line] = difference.header
    assert line.startswith("tool 'lookup': parameters recorded ")
    assert "language" in line.split("!= live", 1)[1]


async def test_a_changed_compaction_threshold_fails_the_request_after_the_summary(
    recorded: Session,
) -> None:
    result = await replay(recorded, Code().but(threshold_ratio=0.99).factory())
    difference = result.first_difference
    assert difference is not None and difference.request == AFTER_COMPACTION
    [checkpoint] = [
        e
        for e in recorded.events
        if isinstance(e, UserMessageEvent) and isinstance(e.surface_op, Replace)
    ]
    removed = [c for c in difference.messages if c.kind == "removed"]
    added = [c for c in difference.messages if c.kind == "added"]
    assert [c.recorded_id for c in removed] == [checkpoint.data.id]
    assert added and all(c.live_id for c in added)
    text = str(difference)
    assert f"request {AFTER_COMPACTION} " in text and checkpoint.data.id in text
    assert difference.message_ids[0] == checkpoint.data.id


async def test_a_changed_pre_step_rule_fails_where_it_rewrites_a_prompt(
    recorded: Session,
) -> None:
    async def shout_about_okapis(step: PreStep, call_next: CallNext) -> Enter:
        messages = [
            replace_content(m, "TELL ME ABOUT OKAPIS") if "okapis" in str(m.content) else m
            for m in step.messages
        ]
        return Enter(messages)

    result = await replay(recorded, Code().but(pre_step=(shout_about_okapis,)).factory())
    difference = result.first_difference
    assert difference is not None
    okapi = next(
        e.data
        for e in recorded.events
        if isinstance(e, UserMessageEvent) and "okapis" in str(e.data.content)
    )
    [change] = difference.messages
    assert change.kind == "rewritten"
    assert change.recorded_id == change.live_id == okapi.id  # the same message, rewritten
    assert "TELL ME ABOUT OKAPIS" in change.detail
    first_with_it = next(
        n for n, r in enumerate(reconstructed(recorded), start=1) if okapi in r.messages
    )
    assert difference.request == first_with_it


def reconstructed(session: Session) -> list[GenerateRequest]:
    return reconstruct_requests(session.events)


async def test_a_recording_that_calls_a_tool_the_agent_lacks_is_refused_by_name(
    recorded: Session,
) -> None:
    with pytest.raises(ReplayError, match="tools the agent does not have: add"):
        await replay(recorded, Code().but(tools=(lookup,)).factory())


async def test_until_replays_a_prefix_and_the_fork_goes_on_live(recorded: Session) -> None:
    splices = [e for e in recorded.events if isinstance(e, InboxSplicedEvent) and e.data.inserted]
    third_prompt = splices[2].seq
    result = await replay(recorded, Code().factory(), until=third_prompt)
    assert result.ok and result.requests == result.recorded_requests == 4
    fork = result.session
    agent = Code().factory()(fork, FunctionAdapter(scripted_model))
    agent.followup(create_user_message(content="tell me about quokkas", source={"kind": "user"}))
    await agent.when_idle()
    await agent.aclose()
    assert "quokkas" in str(fork.derive_messages()[-2].content[0])
    assert len([e for e in fork.events if e.type == "turn/end"]) == 3


async def test_a_session_is_replayed_from_a_store_it_is_not_changed_in(
    recorded: Session, tmp_path: Path
) -> None:
    database = tmp_path / "recorded.db"
    async with SqliteSessionStore(database) as store:
        copy = Session.from_log(recorded.header, recorded.events)
        store.attach(copy)
        await store.flush(copy)
    digest = hashlib.sha256(database.read_bytes()).hexdigest()
    files = sorted(p.name for p in tmp_path.iterdir())
    result = await replay(database, Code().factory(), session_id=recorded.id)
    by_url = await replay((f"sqlite:///{database}", recorded.id), Code().factory())
    assert result.ok and by_url.ok
    assert hashlib.sha256(database.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir()) == files


async def test_a_session_without_requests_is_refused() -> None:
    empty = Session.create()
    with pytest.raises(ReplayError, match="no model request"):
        await replay(empty, Code().factory())
