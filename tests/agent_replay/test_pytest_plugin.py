"""The ``dsh_replay`` fixture, in a pytest run of its own (a real subprocess): a test of
a recording passes with identical code and fails, naming the request, with another
system prompt."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from dsh_session import Session, SqliteSessionStore

from .recorded import record

ROOT = Path(__file__).resolve().parents[2]

SUITE = """
from agent_replay.recorded import Code

DATABASE = {database!r}
SESSION = {session!r}


async def test_identical_code(dsh_replay):
    result = await dsh_replay(DATABASE, Code().factory(), session_id=SESSION)
    assert result.requests == 10


async def test_another_system_prompt(dsh_replay):
    await dsh_replay(DATABASE, Code().but(system="other").factory(), session_id=SESSION)
"""


def plugin_options() -> list[str]:
    """``-p`` for the plugin unless the installed package's entry point loads it."""
    names = {ep.value for ep in entry_points(group="pytest11")}
    return (
        []
        if "dsh_agent.testing.pytest_plugin" in names
        else ["-p", "dsh_agent.testing.pytest_plugin"]
    )


async def test_the_fixture_passes_and_fails_a_suite(tmp_path: Path) -> None:
    recorded = await record()
    database = tmp_path / "recorded.db"
    async with SqliteSessionStore(database) as store:
        copy = Session.from_log(recorded.header, recorded.events)
        store.attach(copy)
        await store.flush(copy)
    suite = tmp_path / "test_recorded.py"
    suite.write_text(SUITE.format(database=str(database), session=recorded.id))
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(suite),
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_mode=auto",
            "--rootdir",
            str(tmp_path),
            *plugin_options(),
        ],
        capture_output=True,
        text=True,
        env=environment,
        timeout=240,
        check=False,
    )
    out = done.stdout
    assert "1 failed, 1 passed" in out, out[-3000:]
    assert "test_another_system_prompt" in out
    assert "replay of a recorded session: request 1 (recorded at seq" in out
    assert "system: recorded 'You are a careful assistant. Use the tools.' != live 'other'" in out
