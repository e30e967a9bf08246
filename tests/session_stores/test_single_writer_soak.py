"""Soak: two writer processes contend for one session while the test SIGKILLs either
of them at random moments and starts a replacement. Ownership passes only when the
owner dies; at the end every event any writer saw flushed is in the log at its seq."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .writer_processes import (
    START_DEADLINE,
    flushed_events,
    location_for,
    open_backend,
    report_lines,
    start_child,
    store_session,
)

ROUNDS = 50


class _Writers:
    """Two writer slots, each always holding a live child (until ``kill_all``)."""

    def __init__(self, backend: str, location: Path, tmp_path: Path, rng: random.Random) -> None:
        self.backend, self.location, self.tmp_path, self.rng = backend, location, tmp_path, rng
        self.reports: list[Path] = []
        self.live: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}
        for slot in ("a", "b"):
            self.start(slot)

    def start(self, slot: str) -> None:
        report = self.tmp_path / f"writer-{len(self.reports)}.txt"
        self.reports.append(report)
        seed = self.rng.randrange(1 << 30)
        child = start_child("own", self.backend, self.location, "soak", report, seed)
        self.live[slot] = (child, report)

    def wait_for_an_owner(self) -> None:
        deadline = time.monotonic() + START_DEADLINE
        while not any(
            line.startswith("ready")
            for _, report in self.live.values()
            for line in report_lines(report)
        ):
            assert time.monotonic() < deadline, "no writer took the session"
            time.sleep(0.005)

    def kill(self, slot: str) -> None:
        child, _ = self.live.pop(slot)
        child.send_signal(signal.SIGKILL)
        _, stderr = child.communicate()
        assert child.returncode == -signal.SIGKILL, f"a writer failed: {stderr.decode()}"

    def kill_all(self) -> None:
        for slot in list(self.live):
            self.kill(slot)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "jsonl"])
async def test_random_kills_of_either_writer_never_lose_a_flushed_event(
    backend: str, tmp_path: Path
) -> None:
    seed = int(os.environ.get("DSH_WRITER_SEED", "0")) or random.randrange(1 << 30)
    print(f"two-writer soak seed {seed} (set DSH_WRITER_SEED to replay the kill choices)")
    rng = random.Random(seed)
    location = location_for(backend, tmp_path)
    stored = await store_session(backend, location, "soak")
    writers = _Writers(backend, location, tmp_path, rng)
    try:
        for _ in range(ROUNDS):
            writers.wait_for_an_owner()
            time.sleep(rng.uniform(0.0, 0.1))
            slot = rng.choice(["a", "b"])
            writers.kill(slot)
            writers.start(slot)
    finally:
        writers.kill_all()

    async with open_backend(backend, location) as store:
        loaded = await store.load("soak")
    as_stored = [event.model_dump(mode="json") for event in loaded.events]
    assert as_stored[: len(stored)] == stored
    flushed = [event for report in writers.reports for event in flushed_events(report)]
    assert all(as_stored[event["seq"]] == event for event in flushed), f"seed {seed}"
    lines = [line for report in writers.reports for line in report_lines(report)]
    owners = sum(line.startswith("ready") for line in lines)
    refused = sum(line.startswith("conflict") for line in lines)
    print(f"{owners} owners, {refused} refusals, {len(flushed)} flushed events")
    assert owners > ROUNDS // 4 and refused > 0, f"seed {seed}: ownership never changed hands"
