"""Follow suite: what an idle follower costs as its session's log grows.

Every open stream of ``dsh serve`` (and every ``RemoteAgent.updates()``) follows its
session with ``store.follow``, which polls the store for other processes' writes every
``poll_interval`` (0.1 s) for as long as the stream is open, most of that time with
nothing new. Its cost must follow what changed, not how long the log is: the CPU time
of one poll that finds nothing new, on a session of 100,000 events against one of 100
(``--quick``: 20,000), target at most 1.2x, for the harness's zstd JSONL and SQLite
schema 17 (what ``open_store`` makes of a new root or file). And what many idle
followers cost together: ``FOLLOWERS`` followers of as many sessions, each with nothing
new, against one; they share one look per poll at all their logs' versions, so the
target is at most ``MANY_TARGET`` times one follower's CPU (a follower polling on its
own made it about ``FOLLOWERS`` times). dsh's SQLite layout 1 reads a range of rows,
and PostgreSQL is woken by ``NOTIFY``; they are not measured.
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
SETTLE = 0.05
"""Seconds the followers get to reach their wait before the window opens."""
FOLLOWERS = 100
MANY_TARGET = 5.0


async def _idle_cpu(store: SessionStore, *logs: tuple[str, int]) -> float:
    """CPU seconds per second (all threads) of one follower per ``(session id, seq)``
    in ``logs``, each having read its log to the end and finding nothing new (the first
    reads, which read the logs, and the look each makes before it starts waiting are
    not counted: the figure is what waiting costs)."""
    followers = [store.follow(sid, from_seq=seq - 1, poll_interval=POLL) for sid, seq in logs]
    for follower in followers:
        await anext(follower)  # the first read, which reads the log: its last event
    tasks = [asyncio.ensure_future(anext(follower)) for follower in followers]
    await asyncio.sleep(SETTLE)  # each looks once more (nothing new) and starts waiting
    start = time.process_time()
    await asyncio.sleep(WINDOW)
    spent = time.process_time() - start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for follower in followers:
        await follower.aclose()
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
            samples[name].append(await _idle_cpu(reader, lengths[name]))
    await reader.close()
    return {name: statistics.median(values) for name, values in samples.items()}


async def _many(url: str, repeats: int) -> dict[str, float]:
    writer = open_store(url)
    logs = []
    for index in range(FOLLOWERS):
        session = _session_with(SHORT, f"many{index}")
        writer.attach(session)
        await writer.flush(session)
        logs.append((session.id, session.seq))
        writer.detach(session)
    await writer.close()
    reader = open_store(url, mode="read")
    subjects = {f"{FOLLOWERS} followers": logs, "1 follower": logs[:1]}
    samples: dict[str, list[float]] = {name: [] for name in subjects}
    order = list(subjects)
    for repeat in range(repeats):
        for name in order[repeat % 2 :] + order[: repeat % 2]:
            samples[name].append(await _idle_cpu(reader, *subjects[name]))
    await reader.close()
    return {name: statistics.median(values) for name, values in samples.items()}


def run(options: Options) -> list[Case]:
    """The follow suite's cases."""
    long = 20_000 if options.quick else 100_000
    cases: list[Case] = []
    with tempfile.TemporaryDirectory() as directory:
        for form, url, many_url in (
            ("zstd JSONL", f"jsonl:///{directory}/jsonl", f"jsonl:///{directory}/many"),
            (
                "SQLite schema 17",
                f"sqlite:///{directory}/sessions.db",
                f"sqlite:///{directory}/many.db",
            ),
        ):
            values = asyncio.run(_form(url, long, options.repeats(9)))
            many = asyncio.run(_many(many_url, options.repeats(5)))
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
            cases.append(
                Case(
                    SUITE,
                    f"{form}: CPU per second of {FOLLOWERS} idle followers against one",
                    "s",
                    many,
                    targets=(Target("1 follower", MANY_TARGET, subject=f"{FOLLOWERS} followers"),),
                    notes=f"CPU seconds per second; each of {SHORT}-event sessions, polling "
                    f"every {POLL:g} s; the first reads are not counted",
                    clock="cpu",
                )
            )
    return cases
