"""Sessions loaded, served and closed give their memory back (issue 33: 10,000 idle
sessions in one process, loaded and unloaded over and over), counted in a fresh
interpreter by :mod:`scale.census`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .census import SESSIONS

SLACK_OBJECTS = 50
"""What may come and go between two counts without a leak (caches of the event loop,
of SQLite's statements, of the logging module); one kept session is thousands."""

_TESTS = Path(__file__).resolve().parents[1]


def census(case: str, folder: Path) -> Any:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_TESTS.parent), str(_TESTS)])}
    done = subprocess.run(
        [sys.executable, "-m", "scale.census", case, str(folder)],
        cwd=_TESTS,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_closing_loaded_sessions_gives_their_memory_back(tmp_path: Path) -> None:
    figures = census("closing", tmp_path)
    (objects, traced_bytes), (alive_objects, alive_bytes), (after_objects, after_bytes) = (
        figures["before"],
        figures["alive"],
        figures["after"],
    )
    held_objects, held_bytes = alive_objects - objects, alive_bytes - traced_bytes
    assert held_objects > SESSIONS * 100  # the census sees sessions at all
    assert after_objects - objects <= SLACK_OBJECTS, (after_objects - objects, held_objects)
    assert after_bytes - traced_bytes <= held_bytes // 50, (after_bytes - traced_bytes, held_bytes)


def test_loading_and_closing_sessions_over_and_over_leaves_no_growth(tmp_path: Path) -> None:
    after = census("rounds", tmp_path)["after"]
    # the first round adds each session's end-seed and warms caches: count from the second
    first_objects, first_bytes = after[1]
    last_objects, last_bytes = after[-1]
    assert last_objects - first_objects <= SLACK_OBJECTS, after
    one_session = (first_bytes // SESSIONS) if first_bytes else 0
    assert last_bytes - first_bytes <= max(64 * 1024, one_session), after
