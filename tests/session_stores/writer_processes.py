"""Running ``two_writer_child`` processes and reading what they report."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from dsh_session._session import Session
from dsh_session.stores import JsonlSessionStore, SqliteSessionStore

from .scenarios import complete_turn
from .sqlite_files import layout_one

TESTS_DIR = Path(__file__).resolve().parent.parent
START_DEADLINE = 60.0
"""Seconds a child may take to report something before the test gives up on it."""

Event = dict[str, Any]
"""An event as wire JSON."""


def open_backend(backend: str, location: Path) -> SqliteSessionStore | JsonlSessionStore:
    """``sqlite`` opens (or creates, in schema 17) the database; ``sqlite-layout1``
    first makes it in dsh's layout 1 when it does not exist."""
    if backend == "sqlite-layout1" and not location.exists():
        layout_one(location)
    if backend.startswith("sqlite"):
        return SqliteSessionStore(location)
    return JsonlSessionStore(location)


def location_for(backend: str, tmp_path: Path) -> Path:
    return tmp_path / ("sessions.db" if backend.startswith("sqlite") else "sessions")


async def store_session(backend: str, location: Path, session_id: str) -> list[Event]:
    """Store a session with one completed turn; return its events as wire JSON."""
    session = Session.create(session_id)
    async with open_backend(backend, location) as store:
        store.attach(session)
        complete_turn(session)
    return [event.model_dump(mode="json") for event in session.events]


def start_child(
    mode: str, backend: str, location: Path, session_id: str, report: Path, seed: int = 0
) -> subprocess.Popen[bytes]:
    arguments = [mode, backend, str(location), session_id, str(report), str(seed)]
    return subprocess.Popen(
        [sys.executable, "-m", "session_stores.two_writer_child", *arguments],
        cwd=TESTS_DIR,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def wait_for(child: subprocess.Popen[bytes], report: Path, prefix: str, count: int = 1) -> None:
    """Wait until ``report`` holds ``count`` complete lines starting with ``prefix``."""
    deadline = time.monotonic() + START_DEADLINE
    while sum(line.startswith(prefix) for line in report_lines(report)) < count:
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            _, stderr = child.communicate()
            raise AssertionError(f"writer never reported {prefix!r}: {stderr.decode()}")
        time.sleep(0.005)


def report_lines(report: Path) -> list[str]:
    """The complete lines of a report (a killed child may leave a partial last one)."""
    if not report.exists():
        return []
    return [line for line in report.read_text().splitlines(keepends=True) if line.endswith("\n")]


def flushed_events(report: Path) -> list[Event]:
    """The events a child reported after a flush of them had returned."""
    durable: list[Event] = []
    pending: list[Event] = []
    for line in report_lines(report):
        if line.startswith("flushed "):
            durable.extend(pending)
            pending = []
        elif line.startswith("{"):
            pending.append(json.loads(line))
    return durable
