"""Soak: 8 worker processes serve turns of 200 sessions on one PostgreSQL database,
each turn taking ownership (some by take-over from a live writer), while the test
SIGKILLs workers at random and starts replacements. At the end every event a worker
saw flushed is stored exactly once at its seq, with its bytes; every session
validates, holds no gap or fork, and its model requests reconstruct from the log."""

from __future__ import annotations

import collections
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

from dsh_agent import reconstruct_requests
from dsh_session._session import Session
from dsh_session.stores import PostgresSessionStore

TESTS_DIR = Path(__file__).resolve().parent.parent
WORKERS = 8
SESSIONS = 200
TAKEOVER_RATE = 0.2
START_DEADLINE = 300.0
"""Seconds the first workers may take to start serving (a loaded machine is slow)."""


@dataclass
class Soak:
    dsn: str
    folder: Path
    rng: random.Random
    reports: list[Path] = field(default_factory=list)
    live: list[tuple[subprocess.Popen[bytes], Path]] = field(default_factory=list)
    kills: int = 0

    def start(self) -> tuple[subprocess.Popen[bytes], Path]:
        report = self.folder / f"worker-{len(self.reports)}.txt"
        self.reports.append(report)
        arguments = [self.dsn, str(SESSIONS), str(TAKEOVER_RATE), str(self.rng.randrange(1 << 30))]
        child = subprocess.Popen(
            [sys.executable, "-m", "session_stores_pg.soak_worker", *arguments, str(report)],
            cwd=TESTS_DIR,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        return child, report

    def run(self, seconds: float, mean_kill_interval: float) -> None:
        """Kill a random worker that is serving (a starting one is still importing)
        every ``mean_kill_interval`` seconds on average, and start a replacement."""
        self.live = [self.start() for _ in range(WORKERS)]
        started = time.monotonic()  # the clock starts once all serve: imports are slow
        while not all(report.exists() for _, report in self.live):
            assert time.monotonic() - started < START_DEADLINE, "workers never started"
            time.sleep(0.05)
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                time.sleep(self.rng.uniform(0, 2 * mean_kill_interval))
                serving = [i for i, (_, report) in enumerate(self.live) if report.exists()]
                if serving:
                    index = self.rng.choice(serving)
                    self._kill(self.live[index][0])
                    self.live[index] = self.start()
        finally:
            for child, _ in self.live:
                self._kill(child)

    def _kill(self, child: subprocess.Popen[bytes]) -> None:
        child.send_signal(signal.SIGKILL)
        _, stderr = child.communicate()
        assert child.returncode == -signal.SIGKILL, f"a worker failed: {stderr.decode()}"
        self.kills += 1

    def lines(self) -> list[str]:
        """Every complete report line (a killed worker may leave a partial last one)."""
        found = []
        for report in self.reports:
            if report.exists():
                text = report.read_text()
                found += [line for line in text.splitlines(keepends=True) if line.endswith("\n")]
        return found


def _stored_rows(dsn: str) -> dict[str, list[tuple[int, str]]]:
    with psycopg.connect(dsn) as connection:
        rows = connection.execute(
            "SELECT session_id, seq, event FROM dsh_events ORDER BY session_id, seq"
        ).fetchall()
        heads: dict[str, int] = dict(
            connection.execute("SELECT id, head FROM dsh_sessions").fetchall()
        )
    stored: dict[str, list[tuple[int, str]]] = collections.defaultdict(list)
    for session_id, seq, event in rows:
        digest = hashlib.sha256(event.encode()).hexdigest()[:16]
        stored[session_id].append((seq, digest))
    for session_id, head in heads.items():
        assert [seq for seq, _ in stored[session_id]] == list(range(head)), session_id
    return stored


async def _soak(dsn: str, folder: Path, seconds: float, mean_kill_interval: float) -> None:
    seed = int(os.environ.get("DSH_SOAK_SEED", "0")) or random.randrange(1 << 30)
    print(f"postgres soak seed {seed} (set DSH_SOAK_SEED to replay the kill choices)")
    async with PostgresSessionStore(dsn) as store:  # every session exists before the workers
        for number in range(SESSIONS):
            store.attach(Session.create(f"soak-{number:04d}"))
    soak = Soak(dsn, folder, random.Random(seed))
    soak.run(seconds, mean_kill_interval)

    lines = soak.lines()
    outcomes = collections.Counter(line.strip() for line in lines if not line.startswith("{"))
    flushed: dict[str, dict[int, str]] = collections.defaultdict(dict)
    for line in lines:
        if line.startswith("{"):
            batch = json.loads(line)
            for seq, digest in batch["e"]:
                assert flushed[batch["s"]].setdefault(seq, digest) == digest, "a forked seq"
    stored = _stored_rows(dsn)
    for session_id, events in flushed.items():
        by_seq = dict(stored[session_id])
        assert all(by_seq.get(seq) == digest for seq, digest in events.items()), session_id

    requests = 0
    async with PostgresSessionStore(dsn, mode="read") as store:
        headers = await store.list_sessions()
        for header in headers:
            session, _ = await store.read(header.id)  # validates the whole log
            requests += len(reconstruct_requests(session.events))
    stored_count = sum(len(rows) for rows in stored.values())
    total = sum(len(seqs) for seqs in flushed.values())
    print(
        f"{soak.kills} kills; {len(headers)} sessions; {outcomes['turn']} turns completed; "
        f"{outcomes['conflict']} loads refused; {outcomes['took-over']} take-overs, "
        f"{outcomes['fenced']} writers fenced by one; "
        f"{total} flushed events reported, "
        f"{stored_count} stored; {requests} requests reconstructed"
    )
    assert outcomes["turn"] > 0 and len(headers) == SESSIONS and total > 0
    assert soak.kills > WORKERS and requests >= outcomes["turn"]
    assert outcomes["took-over"] > 0 and outcomes["conflict"] + outcomes["fenced"] > 0, (
        "no contention"
    )


async def test_eight_killed_and_replaced_workers_lose_and_fork_nothing(
    postgres_dsn: str, tmp_path: Path
) -> None:
    await _soak(postgres_dsn, tmp_path, seconds=15, mean_kill_interval=1.0)


@pytest.mark.slow
async def test_a_long_soak_of_killed_workers_loses_and_forks_nothing(
    postgres_dsn: str, tmp_path: Path
) -> None:
    await _soak(postgres_dsn, tmp_path, seconds=180, mean_kill_interval=1.0)
