"""AgentLoop with a tool and a SQLite store, driving llama.cpp's real server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh_agent import AgentLoop, Tool, reconstruct_requests, run, tool
from dsh_llm import create_user_message
from dsh_llm.providers import OpenAIChatAdapter
from dsh_session import ErrorReason, Session, SqliteSessionStore, TurnEndEvent
from real_llm.tiny_model import AFTER_TOOL_REPLY


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteSessionStore]:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    yield store
    await store.close()


def _add_tool(calls: list[tuple[int, int]]) -> Tool:
    @tool
    async def add(a: int, b: int) -> str:
        """Add two integers."""
        calls.append((a, b))
        return str(a + b)

    return add


def _agent(adapter: OpenAIChatAdapter, store: SqliteSessionStore, tools: list[Tool]) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="llamacpp",
        model="tiny",
        system="Answer briefly.",
        tools=tools,
        store=store,
        check_requests=True,
    )


async def test_a_tool_round_trip_is_answered_and_stored(
    adapter: OpenAIChatAdapter, store: SqliteSessionStore, tmp_path: Path
) -> None:
    calls: list[tuple[int, int]] = []
    agent = _agent(adapter, store, [_add_tool(calls)])

    result = await run(
        agent, create_user_message(content="please calc 2+3", source={"kind": "user"})
    )

    assert (result.finish_reason, result.final_response) == ("completed", AFTER_TOOL_REPLY)
    assert calls == [(2, 3)]
    assert len(reconstruct_requests(agent.session.events)) == 2
    await store.flush(agent.session)
    reader = SqliteSessionStore(tmp_path / "sessions.db", mode="read")
    loaded, _ = await reader.read(agent.session.id)
    await reader.close()
    assert list(loaded.events) == list(agent.session.events)


async def test_a_turn_over_the_context_ends_with_the_server_failure(
    adapter: OpenAIChatAdapter, store: SqliteSessionStore
) -> None:
    agent = _agent(adapter, store, [])

    too_long = create_user_message(content="x " * 3000, source={"kind": "user"})
    result = await run(agent, too_long, raise_on_error=False)

    assert result.finish_reason == "error"
    (end,) = [event for event in result.events if isinstance(event, TurnEndEvent)]
    assert isinstance(end.data.reason, ErrorReason)
    assert end.data.reason.error.status == 400
    assert "exceeds the available context size" in end.data.reason.error.message
