"""Follow suite: what an idle follower costs as its session's log grows.

Every open stream of ``dsh serve`` (and every ``RemoteAgent.updates()``) follows its
session with ``store.follow``, which polls the store for other processes' writes every
``poll_interval`` (0.1 s) for as long as the stream is open, most of that time with
nothing new. Its cost must follow what changed, not how long the log is: the CPU time
of one poll that finds nothing new, on a session of 100,000 events against one of 100
(``--quick``: 20,000), target at most 1.2x, for the harness's zstd JSONL and SQLite
schema 17 (what ``open_store`` makes of a new root or file). dsh's SQLite layout 1
reads a range of rows, and PostgreSQL is woken by ``NOTIFY``; they are not measured.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time

from _harness import Case, Options, Target
from session import _session_with

from dsh_session.stores import SessionStore, open_store

SUITE = "follow_idle"
TARGET = 1.2
SHORT = 100
POLL = 0.01
"""Seconds between polls: ten times ``store.follow``'s default, so a window holds
enough polls to measure."""
WINDOW = 0.25


async def _idle_cpu(store: SessionStore, session_id: str, seq: int) -> float:
    """CPU seconds per second (all threads) of one follower that has read the log to
    its end and finds nothing new (its first read, which reads the log, is not
    counted)."""
    follower = store.follow(session_id, from_seq=seq - 1, poll_interval=POLL)
    await anext(follower)  # the first read, which reads the log: its last event
    task = asyncio.ensure_future(anext(follower))
    start = time.process_time()
    await asyncio.sleep(WINDOW)
    spent = time.process_time() - start
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return spent / WINDOW


async def _form(url: str, long: int, repeats: int) -> dict[str, float]:
    writer = open_store(url)
    lengths = {}
    for size in (long, SHORT):
        session = _session_with(size, f"s{size}")
        writer.attach(session)
        await writer.flush(session)
        lengths[f"{size:,} events"] = (session.id, session.seq)
        writer.detach(session)
    await writer.close()
    reader = open_store(url, mode="read")
    samples: dict[str, list[float]] = {name: [] for name in lengths}
    order = list(lengths)
    for repeat in range(repeats):
        for name in order[repeat % 2 :] + order[: repeat % 2]:
            samples[name].append(await _idle_cpu(reader, *lengths[name]))
    await reader.close()
    return {name: statistics.median(values) for name, values in samples.items()}


def run(options: Options) -> list[Case]:
    """The follow suite's cases."""
    long = 20_000 if options.quick else 100_000
    cases: list[Case] = []
    with tempfile.TemporaryDirectory() as directory:
        for form, url in (
            ("zstd JSONL", f"jsonl:///{directory}/jsonl"),
            ("SQLite schema 17", f"sqlite:///{directory}/sessions.db"),
        ):
            values = asyncio.run(_form(url, long, options.repeats(9)))
            cases.append(
                Case(
                    SUITE,
                    f"{form}: CPU per second of an idle follower, polling every {POLL:g} s",
                    "s",
                    values,
                    targets=(Target(f"{SHORT} events", TARGET, subject=f"{long:,} events"),),
                    notes="CPU seconds per second; the follower's first read is not counted",
                    clock="cpu",
                )
            )
    return cases
