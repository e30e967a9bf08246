"""A real crash test: a child process writes turns to a store, flushing at the agent
loop's checkpoints, and is killed with SIGKILL at a random moment. After every kill,
load succeeds, every event whose flush had returned is present and equal, ids are
stable across two loads, and the repaired log passes validation."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dsh_session._session import Session
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore

TESTS_DIR = Path(__file__).resolve().parent.parent
ROUNDS_PER_SESSION = 4
"""Kills a session survives before the next round starts a fresh one (keeps logs short)."""


@dataclass
class _Tally:
    """What the kills exercised, to show the test did not pass vacuously."""

    flushes: int = 0
    torn_tails: int = 0
    repairs: int = 0


Log = list[dict[str, Any]]
"""A log as wire JSON, one dict per event."""


def _open(backend: str, location: Path) -> SessionStore:
    if backend == "sqlite":
        return SqliteSessionStore(location)
    return JsonlSessionStore(location)


def _run_child_until_killed(
    backend: str, location: Path, session_id: str, report: Path, rng: random.Random
) -> None:
    arguments = [backend, str(location), session_id, str(report), str(rng.randrange(1 << 30))]
    child = subprocess.Popen(
        [sys.executable, "-m", "session_stores.crash_writer", *arguments],
        cwd=TESTS_DIR,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not (report.exists() and report.read_text().startswith("ready")):
            if child.poll() is not None or time.monotonic() > deadline:
                _, stderr = child.communicate()
                raise AssertionError(f"crash writer did not start: {stderr.decode()}")
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.12))
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate()
    assert child.returncode == -signal.SIGKILL, "the child must die by SIGKILL, not exit"


def _read_report(report: Path, durable: Log, tally: _Tally) -> None:
    """Extend ``durable`` with the events the child reported after flushes returned."""
    pending: Log = []
    for line in report.read_text().splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # killed while reporting: not a completed report
        if line.startswith("flushed "):
            durable.extend(pending)
            pending = []
            tally.flushes += 1
            assert int(line.split()[1]) == len(durable)
        elif line.startswith("ready "):
            assert int(line.split()[1]) == len(durable), "the child resumed another log"
        else:
            pending.append(json.loads(line))


async def _check_after_kill(
    backend: str, location: Path, session_id: str, durable: Log, tally: _Tally
) -> Log:
    """Load twice through two store objects and check the log; return it as durable."""
    first_store = _open(backend, location)
    loaded = await first_store.load(session_id)
    report = first_store.load_report(loaded)
    tally.torn_tails += report.torn_tail is not None
    tally.repairs += report.repaired
    first_store.detach(loaded)  # without a flush: load made its repair durable itself
    await first_store.close()

    as_stored = [event.model_dump(mode="json") for event in loaded.events]
    assert as_stored[: len(durable)] == durable, "an event flushed before the kill changed"
    assert loaded.open_turn is None

    second_store = _open(backend, location)
    again = await second_store.load(session_id)
    assert list(again.events) == list(loaded.events)
    assert [m.id for m in again.derive_messages()] == [m.id for m in loaded.derive_messages()]
    assert second_store.load_report(again).appended == ()
    Session.from_log(again.header, again.events)  # the repaired log validates as a whole
    await second_store.close()
    return as_stored  # the repair is durable too, and the next child continues from it


async def _crash_rounds(backend: str, tmp_path: Path, kills: int, seed: int) -> _Tally:
    rng = random.Random(seed)
    location = tmp_path / ("sessions.db" if backend == "sqlite" else "sessions")
    tally = _Tally()
    durable: Log = []
    for round_number in range(kills):
        if round_number % ROUNDS_PER_SESSION == 0:
            session_id, durable = f"crash-{round_number}", []
        report = tmp_path / f"report-{round_number}.txt"
        _run_child_until_killed(backend, location, session_id, report, rng)
        _read_report(report, durable, tally)
        durable = await _check_after_kill(backend, location, session_id, durable, tally)
    return tally


@pytest.mark.parametrize("backend", ["sqlite", "jsonl"])
async def test_sigkill_never_loses_a_flushed_event(backend: str, tmp_path: Path) -> None:
    tally = await _crash_rounds(backend, tmp_path, kills=20, seed=20261202)
    print(tally)

    assert tally.flushes > 0, "the child never got to flush: the test proved nothing"
    assert tally.repairs > 0, "no kill landed mid-turn: the repair path went untested"


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 200 kills of a process that starts each time: minutes, not seconds
@pytest.mark.parametrize("backend", ["sqlite", "jsonl"])
async def test_sigkill_soak(backend: str, tmp_path: Path) -> None:
    seed = int(os.environ.get("DSH_CRASH_SEED", "0")) or random.randrange(1 << 30)
    print(f"crash soak seed {seed} (set DSH_CRASH_SEED to replay the kill timings)")
    tally = await _crash_rounds(backend, tmp_path, kills=200, seed=seed)
    print(tally)

    assert tally.flushes > 0 and tally.repairs > 0, f"seed {seed}: nothing was exercised"
