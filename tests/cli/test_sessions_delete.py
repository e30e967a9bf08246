"""``dsh sessions delete``: asks at a terminal, refuses without one unless ``--yes``,
takes id prefixes, and never deletes a session a running chat owns."""

from __future__ import annotations

import asyncio
import re

from cli.openai_server import fake_openai_server
from cli.runner import DSH_COMMAND, DemoRun, Dsh, dsh_environment
from cli.terminal import Terminal
from cli.test_chat_terminal import PROMPT, start_chat
from cli.test_sessions import _one_line_error, _store_sessions


def _listed(dsh: Dsh) -> list[str]:
    return [summary["id"] for summary in dsh.json("sessions", "list")]


def test_yes_deletes_the_session_named_by_a_prefix(dsh: Dsh) -> None:
    asyncio.run(_store_sessions(dsh.cwd / "dsh.db", "abc-1111", "abd-2222"))
    result = dsh.run("sessions", "delete", "abc", "--yes")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "deleted session abc-1111 from sqlite:///dsh.db\n"
    assert _listed(dsh) == ["abd-2222"]
    _one_line_error(dsh.run("sessions", "show", "abc-1111"), "no session", "'abc-1111'")


def test_without_a_terminal_and_without_yes_nothing_is_deleted(dsh: Dsh) -> None:
    asyncio.run(_store_sessions(dsh.cwd / "dsh.db", "abc-1111"))
    refused = dsh.run("sessions", "delete", "abc-1111", input="y\n")
    _one_line_error(refused, "without confirmation", "--yes")
    assert _listed(dsh) == ["abc-1111"]


def test_unknown_and_ambiguous_ids_are_one_line(dsh: Dsh) -> None:
    asyncio.run(_store_sessions(dsh.cwd / "dsh.db", "abd-2222", "abd-3333"))
    _one_line_error(dsh.run("sessions", "delete", "zzz", "--yes"), "no session", "'zzz'")
    ambiguous = dsh.run("sessions", "delete", "abd", "--yes")
    _one_line_error(ambiguous, "'abd' is the start of 2 session ids", "abd-2222", "abd-3333")
    missing_store = dsh.run("sessions", "delete", "abd", "--yes", "--store", "sqlite:///no.db")
    _one_line_error(missing_store, "no session store at")
    assert _listed(dsh) == ["abd-2222", "abd-3333"]
    assert not (dsh.cwd / "no.db").exists()


def _ask(dsh: Dsh, session_id: str, answer: str) -> Terminal:
    argv = [*DSH_COMMAND, "sessions", "delete", session_id]
    terminal = Terminal(argv, cwd=dsh.cwd, env=dsh_environment())
    terminal.expect(f"delete session {session_id} (")
    terminal.expect("for good? [y/N] ")
    terminal.type(answer + "\r")
    return terminal


def test_at_a_terminal_it_asks_and_deletes_only_after_yes(demo_copy: Dsh) -> None:
    (session_id,) = _listed(demo_copy)
    fork = demo_copy.json("sessions", "fork", session_id)["id"]

    declined = _ask(demo_copy, session_id, "n")
    try:
        assert declined.wait() == 0  # declining is an answer, not a failure
        assert f"nothing deleted: session {session_id} stays in sqlite:///dsh.db" in (
            declined.output
        )
        assert "error" not in declined.output
    finally:
        declined.close()
    assert _listed(demo_copy) == [session_id, fork]

    accepted = _ask(demo_copy, session_id, "y")
    try:
        assert accepted.wait() == 0
    finally:
        accepted.close()
    assert re.search(r"2 turns, 12 messages; its forks \S+ keep their copy", accepted.output)
    assert f"deleted session {session_id}" in accepted.output
    assert _listed(demo_copy) == [fork]  # the fork stays and still loads
    assert demo_copy.json("sessions", "verify", fork)["valid"] is True


def test_a_session_a_chat_is_writing_is_not_deleted(demo_copy: Dsh, demo: DemoRun) -> None:
    with fake_openai_server() as server:
        chat = start_chat(server, demo_copy.cwd, "--session", demo.session_id[:13])
        try:
            chat.expect_screen(f"resumed session {demo.session_id}")
            chat.expect_screen(PROMPT)
            refused = demo_copy.run("sessions", "delete", demo.session_id, "--yes")
            _one_line_error(refused, "being written by another writer", f"pid {chat.process.pid}")
            chat.type("\x03")
            assert chat.wait() == 0
        finally:
            chat.close()
    assert demo_copy.ok("sessions", "delete", demo.session_id, "--yes")
    assert _listed(demo_copy) == []


def test_a_session_too_damaged_to_be_listed_is_deleted_by_its_full_id(dsh: Dsh) -> None:
    store = dsh.cwd / "logs"
    store.mkdir()
    (store / "broken-1.jsonl").write_text('{"type": "session", "version": 0, "id": \n')
    url = f"jsonl:///{store.name}"
    assert dsh.json("sessions", "list", "--store", url) == []
    prefix = dsh.run("sessions", "delete", "broken", "--yes", "--store", url)
    assert prefix.returncode == 1
    # a prefix needs a listing
    assert "dsh: error: no session in jsonl:///logs has the id or id prefix 'broken'" in (
        prefix.stderr
    )
    assert (store / "broken-1.jsonl").exists()

    result = dsh.run("sessions", "delete", "broken-1", "--yes", "--store", url)

    assert result.returncode == 0, result.stderr
    assert list(store.iterdir()) == []
