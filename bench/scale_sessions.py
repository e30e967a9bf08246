"""Scale suite, many sessions: 10,000 sessions alive in one process.

``SESSIONS`` sessions of ``TURNS`` tool turns each are stored in one SQLite file
(schema 17): one session played with the instant model of ``_instant.py``, the others
copies of its log with fresh session and message ids (``_bulk_logs.py``), each written
and loaded once (its end-seed) through the store, as a real run leaves them (see
``_populate``). Then all are loaded from it (``store.load``: validated, repair-checked,
attached) and left idle. The suite reports:

- resident memory (RSS) per idle session, per kept message (the messages on the
  sessions' surfaces) and per event, and the Python heap objects per session, while
  all are loaded;
- a tool turn on one of the loaded sessions (attached to the store, so the turn's
  flushes commit and fsync), CPU time per turn, p99 and median, against the same turn
  on a session loaded into an otherwise empty process (before the sessions are loaded
  and after they are unloaded, pooled so that drift hits both alike). The collector
  stays on, as in a real program. Target: p99 (and median) within 1.2x (issue 33);
- loading and unloading (detach, drop) ``ROUND_SESSIONS`` sessions ``ROUNDS`` times:
  the live objects and the traced heap after the last round against after the fifth
  (after the first too, in the notes: CPython's interned-string table, to which
  pathlib adds each lock file's name, grows in steps over the first rounds). Target:
  no growth (within 1 %).

The default scale is ``DEFAULT_SESSIONS`` (``--quick``: ``QUICK_SESSIONS``); the
issue's 10,000 is ``bench/run.py --full-scale`` (or ``python bench/scale_sessions.py
--full``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import shutil
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from _bulk_logs import Reminter
from _harness import Case, Options, Target, print_case
from _instant import SYSTEM, InstantModel, add, play_turn

from dsh_agent import AgentLoop
from dsh_session import Session
from dsh_session.stores import SqliteSessionStore

SUITE = "scale_sessions"
SESSIONS = 10_000
DEFAULT_SESSIONS = 1_000
QUICK_SESSIONS = 300
TURNS = 20
ROUNDS = 10
ROUND_SESSIONS = 1_000
QUICK_ROUND_SESSIONS = 100
TURN_SAMPLES = 300
QUICK_TURN_SAMPLES = 100
TURN_TARGET = 1.2
GROWTH_TARGET = 1.01
SETTLED = ROUNDS // 2
"""The round the growth is counted from: by then the interpreter's tables have grown."""
MODEL = InstantModel()
RAM_FOLDER = Path("/dev/shm")
"""Where the sessions are written before their database moves to the disk."""


def _resident_bytes() -> int:
    """This process's resident set size now."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _agent(session: Session, store: SqliteSessionStore | None) -> AgentLoop:
    return AgentLoop(
        session=session,
        adapter=MODEL,
        provider="bench",
        model="instant",
        system=SYSTEM,
        tools=[add],
        store=store,
    )


async def _populate(database: Path, count: int) -> list[str]:
    """``count`` sessions of ``TURNS`` tool turns in the SQLite file ``database``: one
    played for real, the others copies of its log with fresh session and message ids
    (``_bulk_logs``), each flushed and then loaded once (which adds its end-seed, as
    the first load of any stored session does) by a ``SqliteSessionStore``. The store
    works in a folder in memory (``RAM_FOLDER``, when there is one) whose files are
    then moved beside ``database``: the same database, without two fsyncs a session on
    the shared disk."""
    ram = RAM_FOLDER if RAM_FOLDER.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="dsh-bench-populate-", dir=ram) as folder:
        store = SqliteSessionStore(Path(folder) / database.name)
        try:
            played = _agent(Session.create(), None)
            for _ in range(TURNS):
                await play_turn(played)
            copies = Reminter(played.session)
            ids: list[str] = []
            for index in range(count):
                session = played.session if index == 0 else copies.copy()
                store.attach(session)
                await store.flush(session)
                store.detach(session)
                store.detach(await store.load(session.id))
                ids.append(session.id)
        finally:
            await store.close()
        for file in Path(folder).iterdir():  # the database and its search index
            shutil.move(file, database.parent / file.name)
    return ids


async def _turn_times(
    store: SqliteSessionStore, ids: list[str], loaded: dict[str, Session] | None, samples: int
) -> list[float]:
    """CPU seconds of one tool turn on each of ``samples`` sessions drawn from ``ids``:
    on the already loaded one when ``loaded`` holds it, else loaded for the turn (not
    timed) and unloaded after it."""
    chooser = random.Random(samples)
    times = []
    for index in range(samples + 10):  # the first ten warm up
        sid = chooser.choice(ids)
        session = loaded[sid] if loaded is not None else await store.load(sid)
        agent = _agent(session, store)
        start = time.process_time()
        await play_turn(agent)
        elapsed = time.process_time() - start
        await agent.aclose()  # gives the session back; it stays attached to the store
        if loaded is None:
            store.detach(session)  # the turn ended with a flush: nothing pending
        if index >= 10:
            times.append(elapsed)
    return times


async def _unload(store: SqliteSessionStore, loaded: dict[str, Session]) -> None:
    for session in loaded.values():
        store.detach(session)
    loaded.clear()


def _p99(samples: list[float]) -> float:
    return sorted(samples)[max(0, round(len(samples) * 0.99) - 1)]


async def _rounds(store: SqliteSessionStore, ids: list[str], count: int) -> list[tuple[int, int]]:
    """Live objects and traced bytes after each of ``ROUNDS`` load/unload rounds."""
    after: list[tuple[int, int]] = []
    tracemalloc.start()
    try:
        for _ in range(ROUNDS):
            loaded = {sid: await store.load(sid) for sid in ids[:count]}
            for session in loaded.values():
                session.derive_messages()  # what a served session builds at once
            await _unload(store, loaded)
            gc.collect()
            after.append((len(gc.get_objects()), tracemalloc.get_traced_memory()[0]))
    finally:
        tracemalloc.stop()
    return after


async def _measure(options: Options, directory: Path) -> list[Case]:
    count = (
        SESSIONS if options.full_scale else QUICK_SESSIONS if options.quick else DEFAULT_SESSIONS
    )
    samples = QUICK_TURN_SAMPLES if options.quick else TURN_SAMPLES
    per_round = min(count, QUICK_ROUND_SESSIONS if options.quick else ROUND_SESSIONS)
    started = time.perf_counter()
    ids = await _populate(directory / "sessions.db", count)
    populate_seconds = time.perf_counter() - started
    store = SqliteSessionStore(directory / "sessions.db")
    try:
        empty = await _turn_times(store, ids, None, samples // 2)

        gc.collect()
        objects_before, rss_before = len(gc.get_objects()), _resident_bytes()
        started = time.perf_counter()
        loaded = {sid: await store.load(sid) for sid in ids}
        load_seconds = time.perf_counter() - started
        messages = sum(len(session.derive_messages()) for session in loaded.values())
        events = sum(session.seq for session in loaded.values())
        gc.collect()
        rss_loaded, objects_loaded = _resident_bytes(), len(gc.get_objects())
        alive = await _turn_times(store, ids, loaded, samples)

        await _unload(store, loaded)
        gc.collect()
        rss_unloaded, objects_unloaded = _resident_bytes(), len(gc.get_objects())
        empty += await _turn_times(store, ids, None, samples - samples // 2)
        rounds = await _rounds(store, ids, per_round)
    finally:
        await store.close()

    held = rss_loaded - rss_before
    label = f"{count:,} sessions alive"
    scale = (
        f"{count:,} sessions x {TURNS} tool turns ({events:,} events, {messages:,} messages "
        f"on the surfaces); populated in {populate_seconds:.0f} s, loaded in "
        f"{load_seconds:.1f} s ({load_seconds / count * 1e3:.2f} ms a session)"
    )
    return [
        Case(
            SUITE,
            f"memory of {count:,} idle loaded sessions",
            "bytes",
            {
                "RSS per idle session": held / count,
                "RSS per kept message": held / messages,
                "RSS per event": held / events,
            },
            notes=f"{scale}; {(objects_loaded - objects_before) / count:,.0f} heap objects "
            f"per session; RSS after unloading all: {(rss_unloaded - rss_before) / 2**20:+,.0f}"
            f" MiB, live objects {objects_unloaded - objects_before:+,}",
        ),
        Case(
            SUITE,
            f"tool turn on a loaded 20-turn session (SQLite store), {label} vs empty process",
            "s",
            {
                f"p99, {label}": _p99(alive),
                "p99, empty process": _p99(empty),
                f"median, {label}": statistics.median(alive),
                "median, empty process": statistics.median(empty),
                f"max, {label}": max(alive),
                "max, empty process": max(empty),
            },
            targets=(
                Target("p99, empty process", TURN_TARGET, subject=f"p99, {label}"),
                Target("median, empty process", TURN_TARGET, subject=f"median, {label}"),
            ),
            notes=f"{len(alive)} turns alive, {len(empty)} empty; collector on",
            clock="cpu",
        ),
        Case(
            SUITE,
            f"load and unload {per_round:,} sessions, {ROUNDS} rounds: after the last vs the "
            f"{SETTLED}th",
            "objects/bytes",
            {
                f"live objects after round {ROUNDS}": rounds[-1][0],
                f"live objects after round {SETTLED}": rounds[SETTLED - 1][0],
                f"traced bytes after round {ROUNDS}": rounds[-1][1],
                f"traced bytes after round {SETTLED}": rounds[SETTLED - 1][1],
            },
            targets=(
                Target(
                    f"live objects after round {SETTLED}",
                    GROWTH_TARGET,
                    subject=f"live objects after round {ROUNDS}",
                ),
                Target(
                    f"traced bytes after round {SETTLED}",
                    GROWTH_TARGET,
                    subject=f"traced bytes after round {ROUNDS}",
                ),
            ),
            notes=f"after round 1: {rounds[0][0]:,} objects, {rounds[0][1]:,} bytes; "
            "gc.collect() after each round; objects by gc.get_objects(), bytes by "
            "tracemalloc (started before round 1). The interpreter's own tables (the "
            "interned strings pathlib adds a lock file's name to) grow in steps over the "
            "first rounds, hence the later reference",
        ),
    ]


def run(options: Options) -> list[Case]:
    with tempfile.TemporaryDirectory(prefix="dsh-bench-scale-sessions-") as directory:
        return asyncio.run(_measure(options, Path(directory)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="10,000 sessions (minutes)")
    arguments = parser.parse_args()
    for case in run(Options(full_scale=arguments.full)):
        print_case(case)
