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
- LangGraph's ``PostgresSaver`` writing the same conversation: one checkpoint per
  dsh flush, each holding the conversation so far (what a graph's state holds),
  beside dsh flushing the conversation's new events at the same points.

The server is ``DSH_BENCH_POSTGRES_DSN`` when set, else a throwaway local cluster
(``_postgres.py``). Flushes per second across processes, with and without ``NOTIFY``,
and follower latency are the ``postgres_notify`` suite.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import psycopg
from _harness import Case, Options, Target, compare
from _postgres import schema, server
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

SUITE = "postgres"


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
        store = PostgresSessionStore(schema(dsn, f"bench_flush_{size}"))
        subjects = {
            "dsh PostgresSessionStore": await _dsh_flush(store, size),
            "floor executemany+commit": _floor(schema(dsn, f"floor_{size}"), size, serialize=False),
            "floor, serializing too": _floor(schema(dsn, f"floors_{size}"), size, serialize=True),
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
    target = schema(dsn, "bench_load")
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
    target = schema(dsn, "bench_langgraph")
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

    dsh_dsn = schema(dsn, "bench_conversation")
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
    with server() as dsn:
        return [
            *asyncio.run(_flush_cases(dsn, options)),
            _load_case(dsn, options),
            _langgraph_case(dsn, options),
        ]
