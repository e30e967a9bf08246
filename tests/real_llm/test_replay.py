"""Replay tests over sessions recorded against the real llama.cpp server: a plain
exchange and a tool-using one are stored, then replayed from the store with the same
code (green) and with a changed system prompt or tool schema (the first request fails,
naming what changed)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from dsh_agent import AgentLoop, Tool, run, tool
from dsh_agent.testing import ToolMode, replay
from dsh_llm import ModelAdapter, TextBlock, create_user_message
from dsh_llm.providers import OpenAIChatAdapter
from dsh_session import Session, SqliteSessionStore, ToolResultEvent
from dsh_session.stores import JsonlSessionStore, SessionStore
from real_llm.tiny_model import AFTER_TOOL_REPLY, PLAIN_REPLY

SYSTEM = "Answer briefly."
TOOL_MODES: tuple[ToolMode, ...] = ("recorded", "live")


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@tool(name="add")
async def add_v2(a: int, b: int, c: int = 0) -> str:
    """Add two integers."""
    return str(a + b + c)


@dataclass(frozen=True)
class Code:
    """The agent as "today's code" builds it; a test changes one thing."""

    system: str = SYSTEM
    tools: tuple[Tool, ...] = (add,)

    def factory(self) -> Callable[[Session, ModelAdapter], AgentLoop]:
        def build(session: Session, adapter: ModelAdapter) -> AgentLoop:
            return AgentLoop(
                session=session,
                adapter=adapter,
                provider="llamacpp",
                model="tiny",
                system=self.system,
                tools=list(self.tools),
            )

        return build

    def but(self, **changes: object) -> Code:
        return replace(self, **changes)  # type: ignore[arg-type]


async def _record(adapter: OpenAIChatAdapter, store: SessionStore, prompts: list[str]) -> str:
    """Run ``prompts`` against the real server and store the session; its id."""
    session = Session.create()
    agent = Code().factory()(session, adapter)
    store.attach(session)
    for prompt in prompts:
        result = await run(agent, create_user_message(content=prompt, source={"kind": "user"}))
        assert result.finish_reason == "completed"
        await store.flush(session)
    await agent.aclose()
    return session.id


@pytest.fixture(params=["sqlite", "jsonl"])
async def recordings(
    request: pytest.FixtureRequest, adapter: OpenAIChatAdapter, tmp_path: Path
) -> tuple[Path, str, str]:
    """The store (a schema-17 SQLite file, a harness JSONL folder), a plain exchange of
    two turns and a tool-using turn recorded in it."""
    location = tmp_path / ("sessions.db" if request.param == "sqlite" else "sessions")
    store: SessionStore = (
        SqliteSessionStore(location) if request.param == "sqlite" else JsonlSessionStore(location)
    )
    async with store:
        plain = await _record(adapter, store, ["hi there", "and again"])
        tooled = await _record(adapter, store, ["please calc 2+3"])
    return location, plain, tooled


async def test_the_recordings_hold_the_real_model_answers(
    recordings: tuple[Path, str, str],
) -> None:
    location, plain, tooled = recordings
    async with (
        SqliteSessionStore(location, mode="read")
        if location.suffix == ".db"
        else JsonlSessionStore(location, mode="read")
    ) as store:
        exchange, _ = await store.read(plain)
        calc, _ = await store.read(tooled)
    answers = [m.content for m in exchange.derive_messages() if m.role == "assistant"]
    assert answers == [(TextBlock(text=PLAIN_REPLY),)] * 2
    [result] = [e.data.message for e in calc.events if isinstance(e, ToolResultEvent)]
    assert "text='5'" in str(result.content)
    assert calc.derive_messages()[-1].content == (TextBlock(text=AFTER_TOOL_REPLY),)


async def test_identical_code_replays_both_recordings_green(
    recordings: tuple[Path, str, str],
) -> None:
    location, plain, tooled = recordings
    for session_id, requests in ((plain, 2), (tooled, 2)):
        for tools in TOOL_MODES:
            result = await replay(
                location,
                Code().factory(),
                session_id=session_id,
                tools=tools,
            )
            assert result.ok, str(result)
            assert result.requests == result.recorded_requests == requests


async def test_a_changed_system_prompt_fails_the_first_request(
    recordings: tuple[Path, str, str],
) -> None:
    location, plain, tooled = recordings
    for session_id in (plain, tooled):
        result = await replay(
            location, Code().but(system="Answer at length.").factory(), session_id=session_id
        )
        difference = result.first_difference
        assert not result.ok and difference is not None
        assert difference.request == 1 and difference.messages == ()
        assert difference.header == (f"system: recorded {SYSTEM!r} != live 'Answer at length.'",)
        assert str(difference).startswith("request 1 (recorded at seq ")


async def test_a_changed_tool_schema_fails_the_first_request(
    recordings: tuple[Path, str, str],
) -> None:
    location, _, tooled = recordings
    result = await replay(location, Code().but(tools=(add_v2,)).factory(), session_id=tooled)
    difference = result.first_difference
    assert difference is not None and difference.request == 1
    [line] = difference.header  # the description is the same: only the parameters differ
    assert line.startswith("tool 'add': parameters recorded ")
    recorded, live = line.split(" != live ")
    assert '"c"' in live and '"c"' not in recorded
    assert str(difference).startswith("request 1 (recorded at seq ")
