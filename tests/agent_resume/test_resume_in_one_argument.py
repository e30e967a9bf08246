"""Issue 27 item 3: resume in one argument. ``AgentLoop.open(store=..., session_id=...)``
loads the session when it is stored and creates it when not, and owns its lifecycle:
``async with`` closes the loop and the session (the caller's store stays open; a store
opened from a URL is closed). Real SQLite files and JSONL roots, two processes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dsh_agent import AgentConfig, AgentLoop, reconstruct_requests, run
from dsh_llm import TextBlock, create_user_message
from dsh_llm.testing import ScriptedAdapter
from dsh_session import SessionConflictError, SessionCorruptError
from dsh_session.stores import JsonlSessionStore, SqliteSessionStore

CHILD = Path(__file__).with_name("resume_child.py")


def _child(*args: str, hold: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), *args, *(["hold"] if hold else [])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _answer(*args: str) -> dict[str, Any]:
    child = _child(*args)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    line: dict[str, Any] = json.loads(out)
    return line


def _urls(tmp_path: Path) -> dict[str, str]:
    return {
        "sqlite": f"sqlite:///{tmp_path / 'agent.db'}",
        "jsonl": f"jsonl:///{tmp_path / 'sessions'}",
    }


@pytest.mark.parametrize("backend", ["sqlite", "jsonl"])
def test_two_processes_resume_one_conversation_by_its_id(tmp_path: Path, backend: str) -> None:
    url = _urls(tmp_path)[backend]
    first = _answer(url, "chat-1", "m", "hello")
    second = _answer(url, "chat-1", "m", "and again")
    assert first["id"] == second["id"] == "chat-1"
    assert first["answer"] == "hello"
    assert second["answer"] == "hello | and again"  # the second process saw the first's turn


def test_no_session_id_starts_a_new_session_with_a_minted_id(tmp_path: Path) -> None:
    url = _urls(tmp_path)["sqlite"]
    new = _answer(url, "-", "m", "hello")
    assert new["id"] != "chat-1" and len(new["id"]) == 36
    resumed = _answer(url, new["id"], "m", "more")
    assert resumed["answer"] == "hello | more"


def test_a_session_another_process_owns_is_refused_and_nothing_is_held(tmp_path: Path) -> None:
    url = _urls(tmp_path)["sqlite"]
    holder = _child(url, "chat-1", "m", "hello", hold=True)
    assert holder.stdout is not None and holder.stdin is not None
    assert json.loads(holder.stdout.readline())["answer"] == "hello"

    async def open_it() -> None:
        async with AgentLoop.open(store=url, session_id="chat-1", **_options()):
            raise AssertionError("opened a session another process owns")

    with pytest.raises(SessionConflictError) as refused:
        asyncio.run(open_it())
    assert refused.value.session_id == "chat-1"
    assert "pid" in (refused.value.holder or "")

    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.wait(timeout=60) == 0
    # The refused open held no lock and left its store closed: the next one resumes.
    assert _answer(url, "chat-1", "m", "after")["answer"] == "hello | after"


def _options(*texts: str, model: str = "m") -> dict[str, Any]:
    return {
        "adapter": ScriptedAdapter(list(texts)),
        "provider": "test",
        "model": model,
        "check_requests": True,
    }


async def test_async_with_closes_the_loop_and_the_session_not_the_callers_store(
    tmp_path: Path,
) -> None:
    async with SqliteSessionStore(tmp_path / "agent.db") as store:
        async with AgentLoop.open(store=store, session_id="chat-1", **_options("one")) as agent:
            await run(agent, "hi")
        assert agent.closed
        # Detached, so this very store loads it again; the store itself is still open.
        async with AgentLoop.open(store=store, session_id="chat-1", **_options("two")) as again:
            assert again.session is not agent.session
            result = await run(again, "more")
            assert result.final_response == "two"
            assert [t for t in _prompts(again)] == ["hi", "more"]
        sessions = await store.list_sessions()
        assert [header.id for header in sessions] == ["chat-1"]


def _prompts(agent: AgentLoop) -> list[str]:
    return [
        "".join(b.text for b in m.content if isinstance(b, TextBlock))
        for m in agent.session.derive_messages()
        if m.role == "user"
    ]


async def test_await_open_returns_the_loop_for_aclose_later(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    agent = await AgentLoop.open(store=url, session_id="chat-1", **_options("one"))
    await run(agent, "hi")
    await agent.aclose()
    # The loop's own store is closed with it: another store object may own the session.
    async with SqliteSessionStore(tmp_path / "agent.db") as store:
        session = await store.load("chat-1")
        assert session.seq > 0


async def test_an_open_session_in_the_same_store_is_a_conflict(tmp_path: Path) -> None:
    async with (
        SqliteSessionStore(tmp_path / "agent.db") as store,
        AgentLoop.open(store=store, session_id="chat-1", **_options("one")),
    ):
        with pytest.raises(SessionConflictError):
            await AgentLoop.open(store=store, session_id="chat-1", **_options())


async def test_a_corrupt_log_raises_as_itself_and_writes_nothing(tmp_path: Path) -> None:
    url = f"jsonl:///{tmp_path / 'sessions'}?compression=none&pack_chunks=false"
    async with AgentLoop.open(store=url, session_id="chat-1", **_options("one", "two")) as agent:
        await run(agent, "hi")
        await run(agent, "again")
    (log,) = [p for p in (tmp_path / "sessions").rglob("*.jsonl") if p.is_file()]
    lines = log.read_bytes().splitlines(keepends=True)
    lines[3] = b'{"this is": "not an event"\n'
    damaged = b"".join(lines)
    log.write_bytes(damaged)

    with pytest.raises(SessionCorruptError):
        await AgentLoop.open(store=url, session_id="chat-1", **_options())
    assert log.read_bytes() == damaged
    assert not list((tmp_path / "sessions").rglob("*.lock"))  # the store let it go


async def test_session_id_without_a_store_is_refused() -> None:
    adapter = ScriptedAdapter([])
    with pytest.raises(TypeError, match="needs a store"):
        await AgentLoop.open(session_id="c", adapter=adapter, provider="p", model="m")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"AgentLoop\.open"):
        AgentLoop(session_id="c", adapter=adapter, provider="p", model="m")  # type: ignore[call-arg]


async def test_another_model_than_the_logs_is_allowed_and_logged_per_request(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    async with AgentLoop.open(store=url, session_id="chat-1", **_options("one")) as agent:
        await run(agent, "hi")
    options = _options("two", model="other-model")
    async with AgentLoop.open(store=url, session_id="chat-1", **options) as agent:
        await run(agent, "hi again")
        requests = reconstruct_requests(agent.session.events)
    assert [(r.provider, r.model) for r in requests] == [("test", "m"), ("test", "other-model")]
    headers = [e.data.reason for e in agent.session.events if e.type == "request/header"]
    assert headers == ["initial", "resume"]


async def test_a_loop_without_a_session_makes_one_and_gives_it_back(tmp_path: Path) -> None:
    async with JsonlSessionStore(tmp_path / "sessions") as store:
        agent = AgentLoop(store=store, **_options("one"))
        await run(agent, create_user_message("hi"))
        await agent.aclose()
        loaded = await store.load(agent.id)  # detached at close: loadable again
        assert [m.id for m in loaded.derive_messages()] == [
            m.id for m in agent.session.derive_messages()
        ]


async def test_an_edit_branch_shares_the_loops_own_store_until_the_last_closes(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    agent = await AgentLoop.open(store=url, session_id="chat-1", **_options("one", "two"))
    first = await run(agent, "hi")
    assert first.message_id is not None
    branch = await agent.edit(first.message_id, "hello")
    await agent.aclose()  # the branch still writes to the store the parent opened
    await branch.when_idle()
    assert branch.session.seq > 0
    await branch.aclose()
    async with SqliteSessionStore(tmp_path / "agent.db") as store:
        loaded = await store.load(branch.id)
        assert [m.id for m in loaded.derive_messages()] == [
            m.id for m in branch.session.derive_messages()
        ]


async def test_a_built_config_opens_with_its_own_store(tmp_path: Path) -> None:
    async with SqliteSessionStore(tmp_path / "agent.db") as store:
        config: AgentConfig[None] = AgentConfig(
            adapter=ScriptedAdapter(["one", "two"]), provider="test", model="m", store=store
        )
        async with AgentLoop.open(config=config, session_id="chat-1") as agent:
            await run(agent, "hi")
        async with AgentLoop.open(config=config, session_id="chat-1") as agent:
            await run(agent, "more")
            assert _prompts(agent) == ["hi", "more"]
        with pytest.raises(TypeError, match="not both"):
            AgentLoop.open(config=config, session_id="chat-1", model="m")  # type: ignore[call-overload]
        bare: AgentConfig[None] = AgentConfig(
            adapter=ScriptedAdapter([]), provider="test", model="m"
        )
        with pytest.raises(TypeError, match="needs a store"):
            await AgentLoop.open(config=bare, session_id="chat-1")
