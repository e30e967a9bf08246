"""``dsh chat --session`` takes the same id prefixes as ``dsh sessions``."""

from __future__ import annotations

import asyncio

from cli.openai_server import FakeOpenAIServer, chat
from cli.runner import Dsh
from cli.test_chat import server
from cli.test_sessions import _store_sessions

__all__ = ["server"]  # the fixture, used by name


def test_a_unique_prefix_resumes_that_session(dsh: Dsh, server: FakeOpenAIServer) -> None:
    asyncio.run(_store_sessions(dsh.cwd / "dsh.db", "abc-1111", "abd-2222"))
    replies, notes, status = chat(dsh, server, "hello there\n", "--session", "abc")
    assert status == 0, notes
    assert "resumed session abc-1111: 1 turns" in notes
    assert replies == "You said: hello there\n"
    turns = {s["id"]: s["turns"] for s in dsh.json("sessions", "list")}
    assert turns == {"abc-1111": 2, "abd-2222": 1}


def test_an_ambiguous_prefix_is_one_line_naming_the_candidates(
    dsh: Dsh, server: FakeOpenAIServer
) -> None:
    asyncio.run(_store_sessions(dsh.cwd / "dsh.db", "abd-2222", "abd-3333"))
    replies, notes, status = chat(dsh, server, "hello\n", "--session", "abd")
    assert status == 1
    assert replies == ""
    (line,) = notes.strip().splitlines()
    assert line.startswith("dsh: error: 'abd' is the start of 2 session ids")
    assert "abd-2222, abd-3333" in line
    assert server.requests == []
    assert len(dsh.json("sessions", "list")) == 2
