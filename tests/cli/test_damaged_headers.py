"""``sessions show|verify ID`` on a session whose header cannot be read report the
damage (naming the session and what is unreadable), not "no session has the id"
(issue 34), in a JSONL store and in SQLite."""

from __future__ import annotations

import json
import sqlite3

import pytest

from cli.runner import DemoRun, Dsh

BROKEN = "broken-1"


def _broken_jsonl(dsh: Dsh) -> str:
    logs = dsh.cwd / "logs"
    logs.mkdir()
    (logs / f"{BROKEN}.jsonl").write_text('{"type": "session", "version": 0, "id": \n')
    return "jsonl:///logs"


@pytest.mark.parametrize("action", ["show", "verify", "export"])
def test_an_unreadable_jsonl_header_is_reported_as_damage(dsh: Dsh, action: str) -> None:
    store = _broken_jsonl(dsh)

    result = dsh.run("sessions", action, BROKEN, "--store", store)

    assert result.returncode == 1
    assert result.stdout == ""
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("dsh: error:")]
    assert error.startswith(f"dsh: error: session '{BROKEN}' in {store} cannot be loaded: ")
    assert "header" in error
    assert "no session" not in error


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [("version", 99, "version 99"), ("created_at", -5, "createdAt")],
)
def test_an_unreadable_sqlite_header_is_reported_as_damage(
    demo_copy: Dsh, demo: DemoRun, column: str, value: int, problem: str
) -> None:
    with sqlite3.connect(demo_copy.cwd / "dsh.db") as db:
        db.execute(f"UPDATE sessions SET {column} = ? WHERE id = ?", (value, demo.session_id))
    assert demo_copy.json("sessions", "list") == []  # too damaged to be listed

    shown = demo_copy.run("sessions", "show", demo.session_id)
    verified = demo_copy.run("sessions", "verify", demo.session_id, "--json")

    assert shown.returncode == 1
    (error,) = [line for line in shown.stderr.splitlines() if line.startswith("dsh: error:")]
    assert error.startswith(
        f"dsh: error: session '{demo.session_id}' in sqlite:///dsh.db cannot be loaded: "
    )
    assert problem in error
    assert verified.returncode == 1
    report = json.loads(verified.stdout)
    assert report["valid"] is False
    assert problem in report["error"]
    assert "no session" not in report["error"]
