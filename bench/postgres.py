"""PostgreSQL suite: the cost of the fenced PostgreSQL store on a real server.

- Durable flush of batches of 10 and 100 events: dsh's ``PostgresSessionStore`` (one
  fenced statement per flush, on a worker thread) beside the raw floor on the same
  server (the same rows, already serialized, one psycopg ``executemany`` and one
  commit per batch on the event loop's thread), and the floor serializing inside the
  timed part. Target: within 1.3x of the floor.
- Loading a 100k-event session (validate, repair check, derive) beside the floor of
  ``SELECT`` + ``json.loads`` of the same rows, and the validating floor (``SELECT`` +
  pydantic-core's ``validate_json`` into dsh's event models, collector paused). Target
  (issue 33): at most 1.25x the validating floor.
- Flushes per second across 8 processes x 200 sessions (25 each, round robin, 10
  events per flush): dsh, dsh without the ``NOTIFY`` (``notify=False``), and the
  floor workload in the same processes.
- LangGraph's ``PostgresSaver`` writing the same conversation: one checkpoint per
  dsh flush, each holding the conversation so far (what a graph's state holds),
  beside dsh flushing the conversation's new events at the same points.

The server is ``DSH_BENCH_POSTGRES_DSN`` when set, else a throwaway local cluster with
PostgreSQL's default durability (``fsync``/``synchronous_commit`` on).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from typing import Any

import psycopg
from _harness import Case, Options, Target, compare
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row
from session import (
    _VALIDATE_JSON,
    LOAD_TARGET,
    VALIDATING_FLOOR,
    _appender,
    _dsh_flush,
    _EventSource,
    _FlushSubject,
    _gc_paused,
    _session_with,
    _time_flushes,
)

from dsh_session._session import Session
from dsh_session.stores import PostgresSessionStore
from dsh_session.stores.postgres.throwaway import ThrowawayServer

SUITE = "postgres"
PROCESSES = 8
SESSIONS = 200


@contextmanager
def _server() -> Iterator[str]:
    given = os.environ.get("DSH_BENCH_POSTGRES_DSN")
    if given:
        yield given
        return
    with ThrowawayServer() as server:
        yield server.dsn


def _schema(dsn: str, name: str) -> str:
    """A DSN whose tables land in a fresh schema ``name``."""
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}".encode())
    return f"{dsn}{'&' if '?' in dsn else '?'}options=-csearch_path%3D{name}"


# --- flush latency ----------------------------------------------------------------


def _floor(dsn: str, size: int, *, serialize: bool) -> _FlushSubject:
    """One executemany and one commit per batch, on this thread."""
    connection = psycopg.connect(dsn)
    connection.execute(
        "CREATE TABLE events (session_id TEXT, seq BIGINT, event TEXT, "
        "PRIMARY KEY (session_id, seq))"
    )
    connection.commit()
    source = _EventSource(size)
    batch: list[Any] = []
    rows: list[tuple[str, int, str]] = []

    def prepare() -> None:
        batch[:] = source.next_batch()
        if not serialize:
            rows[:] = [("bench", seq, event.model_dump_json()) for seq, event in batch]

    async def flush_batch() -> None:
        if serialize:
            rows[:] = [("bench", seq, event.model_dump_json()) for seq, event in batch]
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO events VALUES (%s, %s, %s)", rows)
        connection.commit()

    return _FlushSubject(prepare, flush_batch)


async def _flush_cases(dsn: str, options: Options) -> list[Case]:
    cases = []
    for size in (10, 100):
        store = PostgresSessionStore(_schema(dsn, f"bench_flush_{size}"))
        subjects = {
            "dsh PostgresSessionStore": await _dsh_flush(store, size),
            "floor executemany+commit": _floor(
                _schema(dsn, f"floor_{size}"), size, serialize=False
            ),
            "floor, serializing too": _floor(_schema(dsn, f"floors_{size}"), size, serialize=True),
        }
        values = await _time_flushes(subjects, batches=100 if options.quick else 500)
        await store.close()
        stats = store.stats
        cases.append(
            Case(
                SUITE,
                f"durable flush, batches of {size} events, PostgreSQL",
                "s",
                values,
                targets=(
                    Target("floor executemany+commit", 1.3, subject="dsh PostgresSessionStore"),
                ),
                notes=(
                    f"per batch; dsh: {stats.batches_written} batches, {stats.fsyncs} commits, "
                    f"{stats.threaded_writes} on a worker thread"
                ),
            )
        )
    return cases


# --- load -------------------------------------------------------------------------


def _load_case(dsn: str, options: Options) -> Case:
    events = 20_000 if options.quick else 100_000
    target = _schema(dsn, "bench_load")
    with asyncio.Runner() as runner:
        writer = PostgresSessionStore(target)
        writer.attach(_session_with(events, "long"))
        runner.run(writer.close())
        store = PostgresSessionStore(target)
        floor = psycopg.connect(target)

        def rows() -> list[Any]:
            query = "SELECT event FROM dsh_events WHERE session_id = 'long' ORDER BY seq"
            return [json.loads(row) for (row,) in floor.execute(query)]

        def validated() -> list[Any]:
            query = "SELECT event FROM dsh_events WHERE session_id = 'long' ORDER BY seq"
            return [_VALIDATE_JSON(row) for (row,) in floor.execute(query)]

        def load() -> object:
            loaded = runner.run(store.load("long"))
            messages = loaded.derive_messages()
            store.detach(loaded)
            return messages

        values = compare(
            {
                "dsh PostgresSessionStore": load,
                "floor SELECT + json.loads": rows,
                VALIDATING_FLOOR: _gc_paused(validated),
            },
            number=1,
            repeats=options.repeats(5),
        )
        runner.run(store.close())
        floor.close()
    return Case(
        SUITE,
        f"load a {events // 1000}k-event session (validate, repair check, derive), PostgreSQL",
        "s",
        values,
        targets=(Target(VALIDATING_FLOOR, LOAD_TARGET, subject="dsh PostgresSessionStore"),),
    )


# --- flushes per second across processes ------------------------------------------


async def _worker(dsn: str, kind: str, first: int, count: int, seconds: float) -> int:
    """Flush 10-event batches round robin over ``count`` sessions; return flushes."""
    ids = [f"w{first + i:04d}" for i in range(count)]
    flushes = 0
    if kind in ("dsh", "dsh-quiet"):
        async with PostgresSessionStore(dsn, pool_size=1, notify=kind == "dsh") as store:
            sessions = [Session.create(sid) for sid in ids]
            appenders = [_appender(session) for session in sessions]
            for session in sessions:
                store.attach(session)
                await store.flush(session)
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                for session, appender in zip(sessions, appenders, strict=True):
                    for _ in islice(appender, 10):
                        pass
                    await store.flush(session)
                    flushes += 1
        return flushes
    source = _EventSource(10)
    with psycopg.connect(dsn) as connection:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for sid in ids:
                rows = [(sid, seq, e.model_dump_json()) for seq, e in source.next_batch()]
                with connection.cursor() as cursor:
                    cursor.executemany("INSERT INTO events VALUES (%s, %s, %s)", rows)
                connection.commit()
                flushes += 1
    return flushes


def _throughput(dsn: str, kind: str, seconds: float) -> float:
    per = SESSIONS // PROCESSES
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", dsn, kind, str(i * per), str(per), str(seconds)],
            stdout=subprocess.PIPE,
        )
        for i in range(PROCESSES)
    ]
    total = 0
    for child in children:
        out, _ = child.communicate()
        assert child.returncode == 0, f"a {kind} worker failed"
        total += int(out)
    return total / seconds


def _throughput_case(dsn: str, options: Options) -> Case:
    seconds = 5.0 if options.quick else 15.0
    dsh = _throughput(_schema(dsn, "bench_many"), "dsh", seconds)
    quiet = _throughput(_schema(dsn, "bench_quiet"), "dsh-quiet", seconds)
    floor_dsn = _schema(dsn, "floor_many")
    with psycopg.connect(floor_dsn) as connection:
        connection.execute(
            "CREATE TABLE events (session_id TEXT, seq BIGINT, event TEXT, "
            "PRIMARY KEY (session_id, seq))"
        )
    floor = _throughput(floor_dsn, "floor", seconds)
    return Case(
        SUITE,
        f"flushes/s, {PROCESSES} processes x {SESSIONS} sessions, 10 events per flush",
        "flushes/s",
        {
            "dsh PostgresSessionStore": dsh,
            "dsh, notify=False": quiet,
            "floor executemany+commit": floor,
        },
        notes=f"{seconds:g} s per subject; higher is better; each process owns 25 sessions",
    )


# --- LangGraph PostgresSaver --------------------------------------------------------


_FLUSH_AFTER = ("assistant/message", "tool/result", "turn/end")
"""The events after which the loop flushes (its checkpoints)."""


def _checkpoints(session: Session, turns: int) -> Iterator[int]:
    """Append ``turns`` turns to ``session``, yielding its seq at each checkpoint."""
    appender = _appender(session)
    ended = 0
    while ended < turns:
        next(appender)
        kind = session.events[-1].type
        if kind in _FLUSH_AFTER:
            yield session.seq
        ended += kind == "turn/end"


def _langgraph_case(dsn: str, options: Options) -> Case:
    turns = 10 if options.quick else 40
    session = Session.create("conversation")
    points = list(_checkpoints(session, turns))
    wire = [event.model_dump(mode="json") for event in session.events]
    target = _schema(dsn, "bench_langgraph")
    connection = psycopg.connect(target, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    saver = PostgresSaver(connection)
    saver.setup()
    runs = iter(range(1_000_000))

    def langgraph() -> object:
        config: Any = {"configurable": {"thread_id": f"t{next(runs)}", "checkpoint_ns": ""}}
        for step, point in enumerate(points, 1):
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"messages": wire[:point]}
            checkpoint["channel_versions"] = {"messages": step}
            config = saver.put(
                config, checkpoint, {"source": "loop", "step": step}, {"messages": step}
            )
        return config

    dsh_dsn = _schema(dsn, "bench_conversation")
    runner = asyncio.Runner()
    store = PostgresSessionStore(dsh_dsn)

    def dsh() -> object:
        copy = Session.create(f"c{next(runs)}")
        store.attach(copy)

        async def write() -> None:
            for _ in _checkpoints(copy, turns):
                await store.flush(copy)

        runner.run(write())
        store.detach(copy)
        return copy

    values = compare(
        {"dsh PostgresSessionStore": dsh, "LangGraph PostgresSaver": langgraph},
        number=1,
        repeats=options.repeats(5),
    )
    runner.run(store.close())
    runner.close()
    connection.close()
    return Case(
        SUITE,
        f"write a {turns}-turn conversation ({len(session.events)} events, {len(points)} "
        "checkpoints), PostgreSQL",
        "s",
        values,
        notes=(
            "per conversation; dsh appends the events inside the timed part, LangGraph "
            "gets them ready-made and stores the state so far at each checkpoint"
        ),
    )


def run(options: Options) -> list[Case]:
    """The PostgreSQL suite's cases."""
    with _server() as dsn:
        return [
            *asyncio.run(_flush_cases(dsn, options)),
            _load_case(dsn, options),
            _throughput_case(dsn, options),
            _langgraph_case(dsn, options),
        ]


if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    dsn, kind, first, count, seconds = sys.argv[2:]
    print(asyncio.run(_worker(dsn, kind, int(first), int(count), float(seconds))))
