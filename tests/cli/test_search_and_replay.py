"""``dsh sessions search``, ``dsh sessions reindex`` and ``dsh replay``, run as the real
console script."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from agent_replay.recorded import record
from session_search.corpus import build_sessions, store_all

from cli.runner import Dsh
from cli.test_sessions import _one_line_error
from dsh_session import Session, SqliteSessionStore

TESTS = Path(__file__).resolve().parents[1]


async def _store(database: Path, sessions: list[Session]) -> None:
    async with SqliteSessionStore(database) as store:
        await store_all(store, sessions)


def test_search_finds_messages_and_reindex_rebuilds_the_index(dsh: Dsh) -> None:
    sessions = build_sessions()
    asyncio.run(_store(dsh.cwd / "dsh.db", sessions))
    hits = dsh.json("sessions", "search", "fox")
    assert {hit["sessionId"] for hit in hits} == {sessions[0].id}
    assert len(hits) == 3 and all("[fox]" in hit["snippet"].lower() for hit in hits)
    answers = dsh.json(
        "sessions", "search", "lazy", "--role", "assistant", "--session", sessions[3].id[:30]
    )
    assert [hit["sessionId"] for hit in answers] == [sessions[3].id]
    shown = dsh.ok("sessions", "search", '"lazy dog"')
    assert f"{sessions[0].id}  seq " in shown and "[lazy] [dog]" in shown
    (dsh.cwd / "dsh.db.dsh-search").unlink()  # gone: search scans, reindex rebuilds
    assert len(dsh.json("sessions", "search", "fox")) == 3
    assert dsh.ok("sessions", "reindex") == "indexed 14 messages in sqlite:///dsh.db\n"
    assert len(dsh.json("sessions", "search", "fox")) == 3


def test_a_bad_query_is_one_line_naming_it(dsh: Dsh) -> None:
    asyncio.run(_store(dsh.cwd / "dsh.db", build_sessions()[:1]))
    _one_line_error(
        dsh.run("sessions", "search", '"unclosed'), "search query '\"unclosed'", "quote"
    )


async def _recorded(database: Path) -> Session:
    session = await record()
    async with SqliteSessionStore(database) as store:
        copy = Session.from_log(session.header, session.events)
        store.attach(copy)
        await store.flush(copy)
    return session


AGENT = """
from agent_replay.recorded import Code

build = Code().factory()
terse = Code().but(system="You are terse.").factory()
"""


def test_replay_passes_with_the_same_agent_and_fails_naming_the_request(dsh: Dsh) -> None:
    recorded = asyncio.run(_recorded(dsh.cwd / "dsh.db"))
    (dsh.cwd / "my_agent.py").write_text(AGENT)
    dsh.env["PYTHONPATH"] = os.pathsep.join([dsh.env.get("PYTHONPATH", ""), str(TESTS)])
    same = dsh.run("replay", recorded.id[:30], "--agent", "my_agent:build")
    assert same.returncode == 0, same.stderr
    assert same.stdout == "replay ok: 10 request(s) as recorded\n"
    other = dsh.run("replay", recorded.id, "--agent", "my_agent:terse", "--json")
    assert other.returncode == 1, other.stderr
    assert '"ok": false' in other.stdout
    assert "request 1 (recorded at seq" in other.stdout and "You are terse." in other.stdout
    _one_line_error(dsh.run("replay", recorded.id, "--agent", "my_agent"), "MODULE:FACTORY")
    _one_line_error(
        dsh.run("replay", recorded.id, "--agent", "my_agent:nope"), "no function 'nope'"
    )
