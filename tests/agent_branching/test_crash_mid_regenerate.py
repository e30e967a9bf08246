"""A process killed mid-regenerate leaves the replace durable or absent, never half:
real subprocesses on real SQLite and JSONL stores, killed with SIGKILL, then loaded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_agent import reconstruct_requests
from dsh_llm.testing import ScriptedAdapter
from dsh_session import Replace, Session, SessionEvent, SessionId
from dsh_session.stores import JsonlSessionStore

from .conftest import open_kind
from .support import agent_over, check_surface, ids, texts

TESTS_DIR = Path(__file__).resolve().parent.parent
WORKTREE = TESTS_DIR.parent


def kill_at(store_kind: str, location: Path, where: str) -> str:
    """Run the child until it reports reaching ``where``, SIGKILL it; its session id."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join((str(WORKTREE), str(TESTS_DIR)))}
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_branching.regenerate_child",
            store_kind,
            str(location),
            where,
        ],
        cwd=TESTS_DIR,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    session_id = None
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("session "):
                session_id = line.split()[1]
            elif line.strip() == where:
                break
        else:
            raise AssertionError(f"the child ended early: {child.communicate()[1]}")
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate()
    assert child.returncode == -signal.SIGKILL
    assert session_id is not None
    return session_id


def replaces(events: tuple[SessionEvent, ...] | list[SessionEvent]) -> list[SessionEvent]:
    return [event for event in events if isinstance(event.surface_op, Replace)]


@pytest.mark.parametrize("store_kind", ["sqlite", "jsonl"])
async def test_killed_after_the_replace_it_is_durable_and_the_answer_is_gone(
    store_kind: str, tmp_path: Path
) -> None:
    location = tmp_path / "s.db" if store_kind == "sqlite" else tmp_path
    session_id = kill_at(store_kind, location, "model")
    async with open_kind(store_kind, tmp_path) as store:
        session = await store.load(session_id)
        (replace,) = replaces(list(session.events))
        assert texts(session.derive_messages()) == ["a question"]
        assert "interrupted" in [e.data.reason.kind for e in session.events if e.type == "turn/end"]
        check_surface(session)
        assert len(reconstruct_requests(session.events)) == 1
        # the resumed agent answers the prompt that has no answer now
        agent = agent_over(session, ScriptedAdapter(["a new answer"]), store=store)
        agent.regenerate()
        await agent.when_idle()
        assert texts(session.derive_messages()) == ["a question", "a new answer"]
        assert replaces(list(session.events)) == [replace]
        await agent.aclose()


@pytest.mark.parametrize("store_kind", ["sqlite", "jsonl"])
async def test_killed_before_the_replace_it_is_absent_and_the_answer_stays(
    store_kind: str, tmp_path: Path
) -> None:
    location = tmp_path / "s.db" if store_kind == "sqlite" else tmp_path
    session_id = kill_at(store_kind, location, "pre-step")
    async with open_kind(store_kind, tmp_path) as store:
        session = await store.load(session_id)
    assert replaces(list(session.events)) == []
    assert texts(session.derive_messages()) == ["a question", "the first answer"]
    check_surface(session)


async def test_a_replace_cut_mid_write_is_set_aside_whole(tmp_path: Path) -> None:
    session_id = kill_at("jsonl", tmp_path, "model")
    path = JsonlSessionStore(tmp_path).path_of(SessionId(session_id))
    data = path.read_bytes()
    start = data.index(b'"op":"replace"')
    line_start = data.rindex(b"\n", 0, start) + 1
    path.write_bytes(data[: (line_start + start) // 2 + 1])  # inside the replace's line
    async with JsonlSessionStore(tmp_path) as store:
        session, report = await store.read(session_id)
    assert report.torn_tail is not None
    assert replaces(list(session.events)) == []
    assert texts(session.derive_messages()) == ["a question", "the first answer"]
    reloaded = Session.from_log(session.header, session.events)
    assert ids(reloaded.derive_messages()) == ids(session.derive_messages())
