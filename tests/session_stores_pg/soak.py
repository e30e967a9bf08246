"""The PostgreSQL soak's machinery: worker processes (``soak_worker.py``) serving turns
of ``SESSIONS`` sessions, SIGKILLed at random and replaced, and what they report
flushed; and every stored event's digest, checked to have no gap."""

from __future__ import annotations

import collections
import hashlib
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

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


def stored_rows(dsn: str) -> dict[str, list[tuple[int, str]]]:
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
