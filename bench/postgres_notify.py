"""PostgreSQL notify suite: many writer processes, and followers woken by ``NOTIFY``.

- Flushes per second across 8 processes x 200 sessions (25 each, round robin, 10
  events per flush): dsh with notifications on, dsh with ``notify=False``, and the
  raw floor (the same rows' ``INSERT``s and a commit per flush, in the same
  processes). Targets: notifications on at least 0.9x notifications off and 0.9x
  the floor. The raw floor serializes events made once, where each dsh flush first
  has its 10 events appended to a ``Session`` (ids, timestamps, the session's
  state); a second floor does that appending too (reported, no target), so that
  the two floors part what the loop's appends cost from what the flush costs.
- Follower latency: notifications on while another process follows one session of
  each writer (``store.follow``); for every flush of those sessions, the time from
  the writer's ``flush`` returning (its commit acknowledged) to the follower holding
  the flush's last event. p50 and p99, target p99 <= 20 ms; the flushes per second
  of those rounds are reported beside the others. Every process reads
  ``time.monotonic``, one clock for the whole machine on Linux.

The writer processes start once and hold every subject's sessions (a schema each);
the subjects then run in rounds, interleaved, so that other load on the machine
hits them alike, and each figure is the median over the rounds.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from itertools import islice
from typing import Any

import psycopg
from _harness import Case, Options, Target
from _postgres import schema, server
from session import _appender, _EventSource

from dsh_session._session import Session
from dsh_session.stores import PostgresSessionStore

SUITE = "postgres_notify"
PROCESSES = 8
SESSIONS = 200
PER_PROCESS = SESSIONS // PROCESSES
LATENCY_TARGET = 0.020
"""Seconds: the p99 from a writer's commit to a follower in another process."""


def _session_id(index: int) -> str:
    return f"w{index:04d}"


# --- the processes ----------------------------------------------------------------


async def _writer(dsn: dict[str, str], first: int) -> None:
    """Set up this process's sessions in each subject's schema, then run the subject
    each ``go SUBJECT SECONDS`` line names, printing what it did as one JSON line."""
    ids = [_session_id(first + i) for i in range(PER_PROCESS)]
    stores = {
        "on": PostgresSessionStore(dsn["on"], pool_size=1),
        "off": PostgresSessionStore(dsn["off"], pool_size=1, notify=False),
    }
    sessions = {kind: [Session.create(sid) for sid in ids] for kind in stores}
    appenders = {kind: [_appender(s) for s in sessions[kind]] for kind in stores}
    for kind, store in stores.items():
        for session in sessions[kind]:
            store.attach(session)
            await store.flush(session)
    floor = psycopg.connect(dsn["floor"])
    floor_appending = psycopg.connect(dsn["floor_append"])
    appended = [Session.create(sid) for sid in ids]
    appending = [_appender(s) for s in appended]
    source = _EventSource(10)
    print("ready", flush=True)
    for line in sys.stdin:
        _, subject, seconds = line.split()
        kind = subject.removesuffix("+followers")
        flushes, marks = 0, []
        deadline = time.monotonic() + float(seconds)
        while time.monotonic() < deadline:
            index = flushes % PER_PROCESS
            if kind == "floor":
                sid = ids[index]
                rows = [(sid, seq, e.model_dump_json()) for seq, e in source.next_batch()]
                with floor.cursor() as cursor:
                    cursor.executemany("INSERT INTO events VALUES (%s, %s, %s)", rows)
                floor.commit()
            elif kind == "floor_append":
                for _ in islice(appending[index], 10):
                    pass
                session = appended[index]
                rows = [(session.id, e.seq, e.model_dump_json()) for e in session.events[-10:]]
                with floor_appending.cursor() as cursor:
                    cursor.executemany("INSERT INTO events VALUES (%s, %s, %s)", rows)
                floor_appending.commit()
            else:
                session = sessions[kind][index]
                for _ in islice(appenders[kind][index], 10):
                    pass
                await stores[kind].flush(session)
                if index == 0:
                    marks.append((session.seq, time.monotonic()))
            flushes += 1
        print(json.dumps({"flushes": flushes, "marks": marks}), flush=True)
    floor.close()
    floor_appending.close()
    for store in stores.values():
        await store.close()


async def _follower(dsn: str, session_ids: list[str]) -> None:
    """Follow ``session_ids`` between each ``start`` and ``stop`` line; at each stop,
    print when each event arrived (by session, then seq) as one JSON line."""
    arrivals: dict[str, dict[int, float]] = {sid: {} for sid in session_ids}
    next_seq = dict.fromkeys(session_ids, 0)

    async def follow(store: PostgresSessionStore, sid: str) -> None:
        async for event in store.follow(sid, from_seq=next_seq[sid], poll_interval=1.0):
            assert event.seq == next_seq[sid], "a follower skipped or repeated an event"
            arrivals[sid][event.seq] = time.monotonic()
            next_seq[sid] += 1

    async with PostgresSessionStore(dsn, mode="read", pool_size=2) as store:
        print("ready", flush=True)
        while (await asyncio.to_thread(sys.stdin.readline)).strip() == "start":
            tasks = [asyncio.create_task(follow(store, sid)) for sid in session_ids]
            await asyncio.sleep(0.5)  # every follower has listened and read
            print("ready", flush=True)
            await asyncio.to_thread(sys.stdin.readline)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            print(json.dumps(arrivals), flush=True)
            for seen in arrivals.values():
                seen.clear()


class _Child:
    """A bench process, driven by lines on its stdin, answering lines on its stdout."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.expect("ready")

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{line}\n")
        self.process.stdin.flush()

    def answer(self) -> Any:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.kill()
            raise RuntimeError("a bench process failed")
        return json.loads(line) if line.startswith("{") else line.strip()

    def expect(self, word: str) -> None:
        if self.answer() != word:
            raise RuntimeError(f"a bench process did not answer {word!r}")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        if self.process.wait(timeout=60) != 0:
            raise RuntimeError("a bench process failed")


# --- the cases --------------------------------------------------------------------

SUBJECTS = {
    "on": "dsh, notify on",
    "off": "dsh, notify=False",
    "floor": "floor INSERTs+commit",
    "floor_append": "floor, events appended first",
    "on+followers": "dsh, notify on, 8 followers",
}


def _round(
    writers: list[_Child], follower: _Child, subject: str, seconds: float
) -> tuple[float, list[float]]:
    """Flushes per second of one subject for ``seconds``, and follower latencies."""
    followed = subject.endswith("+followers")
    if followed:
        follower.send("start")
        follower.expect("ready")
    for writer in writers:
        writer.send(f"go {subject} {seconds}")
    results = [writer.answer() for writer in writers]
    if not followed:
        return sum(r["flushes"] for r in results) / seconds, []
    time.sleep(0.5)  # the last flushes reach the follower
    follower.send("stop")
    arrivals = follower.answer()
    latencies = [
        arrivals[_session_id(i * PER_PROCESS)][str(head - 1)] - returned
        for i, result in enumerate(results)
        for head, returned in result["marks"]
    ]
    return sum(r["flushes"] for r in results) / seconds, latencies


def _cases(dsn: str, options: Options) -> list[Case]:
    seconds, rounds = (3.0, 2) if options.quick else (4.0, 5)
    kinds = ("on", "off", "floor", "floor_append")
    dsns = {kind: schema(dsn, f"notify_{kind}") for kind in kinds}
    for floor in ("floor", "floor_append"):
        with psycopg.connect(dsns[floor]) as connection:
            connection.execute(
                "CREATE TABLE events (session_id TEXT, seq BIGINT, event TEXT, "
                "PRIMARY KEY (session_id, seq))"
            )
    writers = [_Child("--writer", json.dumps(dsns), str(i * PER_PROCESS)) for i in range(PROCESSES)]
    follower = _Child(
        "--follower", dsns["on"], *(_session_id(i * PER_PROCESS) for i in range(PROCESSES))
    )
    rates: dict[str, list[float]] = {subject: [] for subject in SUBJECTS}
    latencies: list[float] = []
    order = list(SUBJECTS)
    for number in range(rounds):
        for subject in order[number % len(order) :] + order[: number % len(order)]:
            rate, seen = _round(writers, follower, subject, seconds)
            rates[subject].append(rate)
            latencies += seen
    for child in [*writers, follower]:
        child.close()
    quantiles = statistics.quantiles(latencies, n=100)
    values = {SUBJECTS[subject]: statistics.median(rates[subject]) for subject in SUBJECTS}
    flushes_per_second = Case(
        SUITE,
        f"flushes/s, {PROCESSES} processes x {SESSIONS} sessions, 10 events per flush",
        "flushes/s",
        values,
        targets=(
            Target(SUBJECTS["on"], 1 / 0.9, subject=SUBJECTS["off"]),
            Target(SUBJECTS["on"], 1 / 0.9, subject=SUBJECTS["floor"]),
        ),
        notes=(
            f"median of {rounds} x {seconds:g} s per subject, rounds interleaved; higher is "
            "better, so the targets read other/dsh"
        ),
    )
    latency = Case(
        SUITE,
        "follow(): a writer's flush returned -> a follower in another process has it",
        "s",
        {"p50": quantiles[49], "p99": quantiles[98], "target p99": LATENCY_TARGET},
        targets=(Target("target p99", 1.0, subject="p99"),),
        notes=f"{len(latencies)} flushes of {PROCESSES} followed sessions, in the followed rounds",
    )
    return [flushes_per_second, latency]


def run(options: Options) -> list[Case]:
    """The notify suite's cases."""
    with server() as dsn:
        return _cases(dsn, options)


if __name__ == "__main__" and sys.argv[1:2] == ["--writer"]:
    asyncio.run(_writer(json.loads(sys.argv[2]), int(sys.argv[3])))
elif __name__ == "__main__" and sys.argv[1:2] == ["--follower"]:
    asyncio.run(_follower(sys.argv[2], sys.argv[3:]))
