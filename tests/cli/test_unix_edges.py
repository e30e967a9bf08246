"""``dsh`` behaves like the other tools of a Unix shell: Ctrl-C is a short message and
status 130 (the log stays valid), a reader that stops reading (``| head``) ends it
quietly, piped output is whole lines, and declining a question is not an error."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from session_stores.scenarios import answer, open_turn

from cli.runner import DSH_COMMAND, Dsh, dsh_environment
from cli.terminal import Terminal
from dsh_session import Session
from dsh_session.stores import SqliteSessionStore


def test_ctrl_c_during_the_demo_is_one_line_130_and_a_valid_log(dsh: Dsh) -> None:
    argv = [*DSH_COMMAND, "demo", "--delay", "0.05"]
    terminal = Terminal(argv, cwd=dsh.cwd, env=dsh_environment())
    try:
        terminal.expect("What's the weather in Paris?")
        terminal.expect("thinking ›")  # the first reply streams
        terminal.type("\x03")
        assert terminal.wait() == 130
    finally:
        terminal.close()
    assert "Traceback" not in terminal.output
    assert "failed" not in terminal.output
    assert terminal.output.rstrip().endswith("dsh: interrupted")
    (session,) = dsh.json("sessions", "list")
    report = dsh.json("sessions", "verify", session["id"])
    assert report["valid"] is True
    events = dsh.json("sessions", "show", session["id"])
    (end,) = [e["data"] for e in events if e["type"] == "turn/end"]
    assert end["reason"]["kind"] == "aborted"  # closed by the agent, durably


async def _store_big_session(database: Path) -> None:
    async with SqliteSessionStore(database) as store:
        session = Session.create("big-1")
        for turn in range(1, 201):
            open_turn(session, f"question {turn} " + "x" * 2000)
            answer(session, turn, 1, "y" * 2000)
        store.attach(session)
        await store.flush(session)


def test_export_into_a_reader_that_stops_ends_quietly(dsh: Dsh) -> None:
    asyncio.run(_store_big_session(dsh.cwd / "dsh.db"))  # far more than a pipe buffers
    process = subprocess.Popen(
        [*DSH_COMMAND, "sessions", "export", "big-1"],
        cwd=dsh.cwd,
        env=dsh.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()  # what `| head -1` reads
    process.stdout.close()
    status = process.wait(timeout=60)
    errors = process.stderr.read().decode()
    process.stderr.close()

    assert first.startswith(b'{"type":"session"')
    assert errors == ""
    assert status == 141  # 128 + SIGPIPE, as a shell reports `yes | head`


def test_piped_sessions_list_prints_whole_lines(dsh: Dsh) -> None:
    prompt = "please compare " + " and ".join(f"city number {n}" for n in range(12))
    session = Session.create("long-1")
    turn = open_turn(session, prompt)
    answer(session, turn, 1, "done")

    async def store() -> None:
        async with SqliteSessionStore(dsh.cwd / "dsh.db") as sessions:
            sessions.attach(session)
            await sessions.flush(session)

    asyncio.run(store())

    narrow = dsh.run("sessions", "list", input=None, env={"COLUMNS": "80"})

    assert narrow.returncode == 0, narrow.stderr
    (line,) = [line for line in narrow.stdout.splitlines() if line.startswith("long-1")]
    assert line.endswith(prompt)
    assert "…" not in narrow.stdout
    json_prompt = dsh.json("sessions", "list")[0]["firstPrompt"]
    assert json_prompt == prompt[:59] + "…"  # the JSON summary keeps its short form
