"""``dsh sessions`` is safe to point at anything: a missing store, a mistyped path or
someone else's database is one error line and stays exactly as it was; a FIFO in a
JSONL folder is skipped; text from the log never drives the terminal."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from session_stores.scenarios import answer, complete_turn, open_turn

from cli.runner import Dsh
from dsh_session import Session
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore

ACTIONS = [
    ["list"],
    ["show", "some-id"],
    ["verify", "some-id"],
    ["verify", "some-id", "--json"],
    ["export", "some-id"],
    ["fork", "some-id"],
]


def _tree(root: Path) -> dict[str, bytes | None]:
    return {
        str(path.relative_to(root)): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


def _one_error_line(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.parametrize("action", ACTIONS, ids=" ".join)
@pytest.mark.parametrize("store", [None, "sqlite:///typo/dsh.db", "jsonl:///typo/logs"])
def test_a_missing_store_is_one_line_and_nothing_is_created(
    dsh: Dsh, action: list[str], store: str | None
) -> None:
    options = [] if store is None else ["--store", store]

    result = dsh.run("sessions", *action, *options)

    _one_error_line(result, "no session store at")
    assert _tree(dsh.cwd) == {}


@pytest.mark.parametrize("action", ACTIONS, ids=" ".join)
def test_someone_elses_database_is_refused_and_left_unchanged(dsh: Dsh, action: list[str]) -> None:
    db = sqlite3.connect(dsh.cwd / "dsh.db")
    db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO accounts (name) VALUES ('ada')")
    db.commit()
    db.close()
    before = _tree(dsh.cwd)

    result = dsh.run("sessions", *action)

    _one_error_line(result, "not a dsh store")
    assert _tree(dsh.cwd) == before


def _store(store: SessionStore, session: Session) -> None:
    async def write() -> None:
        async with store:
            store.attach(session)
            await store.flush(session)

    asyncio.run(write())


def test_a_fifo_in_a_jsonl_folder_is_skipped(dsh: Dsh) -> None:
    logs = dsh.cwd / "logs"
    session = Session.create()
    complete_turn(session)
    _store(JsonlSessionStore(logs), session)
    os.mkfifo(logs / "pipe.jsonl")  # opening it for reading blocks until a writer comes

    listed = dsh.json("sessions", "list", "--store", "jsonl:///logs")

    assert [item["id"] for item in listed] == [session.id]


HOSTILE = (
    "copy \x1b]52;c;cm0gLXJmIH4=\x07 red \x1b[31mRED\x1b[0m csi \x9b2J bell \x07 "
    "back \x08 del \x7f [bold red]markup[/bold red]"
)
"""A stored prompt and answer that try to write the clipboard (OSC 52), recolour and
clear the screen (CSI, also as the 8-bit C1 CSI), ring, and inject rich markup."""

_FORBIDDEN = ["\x1b", "\x9b", "\x07", "\x08", "\x7f"]


def test_text_from_the_log_cannot_drive_the_terminal(dsh: Dsh) -> None:
    session = Session.create()
    turn = open_turn(session, HOSTILE)
    answer(session, turn, 1, HOSTILE)
    _store(SqliteSessionStore(dsh.cwd / "dsh.db"), session)

    outputs = {
        "list": dsh.ok("sessions", "list"),
        "show": dsh.ok("sessions", "show", session.id),
        "show --json": dsh.ok("sessions", "show", session.id, "--json"),
        "export": dsh.ok("sessions", "export", session.id),
        "verify": dsh.ok("sessions", "verify", session.id),
    }

    for name, output in outputs.items():
        for control in _FORBIDDEN:
            assert control not in output, (name, control)
    assert "[bold red]markup[/bold red]" in outputs["show"]
    assert "copy ␛]52;c;cm0gLXJmIH4=" in outputs["show"]  # visible, not acted on
    assert "\\u009b2J" in outputs["show --json"]
