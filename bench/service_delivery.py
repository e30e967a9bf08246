"""Service suite: the agent as a service (``connect`` → mailbox → ``Worker``).

- **Delivery latency**: from the moment a client's ``followup`` returns (durable in the
  mailbox) to the moment the owning worker's inbox holds the message, p50 and p99 over
  sequential deliveries to one served session, on PostgreSQL (the owner is woken by
  ``NOTIFY``) and SQLite (the owner polls the mailbox every 50 ms). Client and worker run
  in one process on one event loop, with separate store objects; a pause of 0-50 ms
  (the same seeded sequence for every subject) precedes each delivery, so that
  deliveries do not fall in step with a poll.
- **Turns per second**: 200 sessions on PostgreSQL each get one followup; 1, 2 and 4
  ``dsh worker`` processes (instant scripted model) serve them until every turn ended.
  The figure is turns / wall seconds, reported as seconds per turn so the ratios read
  like the other suites (lower is better).

The peer is LangGraph's PostgreSQL checkpointer (``AsyncPostgresSaver``), driven the
same way as far as it goes: a client appends the message to the thread's latest
checkpoint (read it, write a child checkpoint with the longer message list), and a
worker on its own connection polls the thread's latest checkpoint and notes each new
message, every 50 ms (dsh's polling interval on SQLite) and every 1 ms (the floor of
polling, one query per millisecond per thread). What it lacks: no mailbox (the client
writes the conversation state itself: two clients reading the same checkpoint write
two children, and one message is lost from the latest), no idempotency (a re-sent
message is appended again), no wake-up (only polling), no ownership handover (its
"double-texting" lives in the paid platform). There is no worker pool to compare
turns per second with.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from _harness import Case, Options
from langgraph.checkpoint.base import copy_checkpoint, empty_checkpoint
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from dsh_agent import AgentLoop, LiveUpdate, MessageQueued, Worker, connect
from dsh_llm import create_user_message, new_message_id
from dsh_llm.testing import FunctionAdapter
from dsh_session import Session, open_store
from dsh_session._mailbox._open import open_mailbox
from dsh_session.stores import SessionStore
from dsh_session.stores.postgres.throwaway import ThrowawayServer

SUITE = "service_delivery"
SESSIONS = 200
BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent


@contextmanager
def _server() -> Iterator[str]:
    given = os.environ.get("DSH_BENCH_POSTGRES_DSN")
    if given:
        yield given
        return
    with ThrowawayServer() as server:
        yield server.dsn


def _schema(dsn: str, name: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}".encode())
    return f"{dsn}{'&' if '?' in dsn else '?'}options=-csearch_path%3D{name}"


async def _new_sessions(store: SessionStore, count: int) -> list[str]:
    ids: list[str] = []
    for _ in range(count):
        session = Session.create()
        store.attach(session)
        await store.flush(session)
        store.detach(session)
        ids.append(session.id)
    return ids


# --- delivery latency -----------------------------------------------------------------


def _pauses(count: int) -> list[float]:
    """A pause before each delivery, uniform in 0-50 ms (the same sequence for every
    subject), so that deliveries do not fall in step with a poll."""
    rng = random.Random(28)
    return [rng.uniform(0, 0.05) for _ in range(count)]


async def _latencies(url: str, deliveries: int) -> list[float]:
    queued: dict[str, float] = {}

    def factory(session: Session, store: SessionStore) -> AgentLoop:
        loop = AgentLoop(
            session=session,
            adapter=FunctionAdapter(lambda request: "ok"),
            provider="bench",
            model="echo",
            store=store,
        )

        def on_update(update: LiveUpdate) -> None:
            if isinstance(update, MessageQueued):
                queued.setdefault(update.message.id, time.perf_counter())

        loop.subscribe(on_update)
        return loop

    latencies = []
    async with open_store(url) as owner_store, open_store(url) as client_store:
        [sid] = await _new_sessions(client_store, 1)
        async with (
            Worker(owner_store, factory, idle_release=3600, scan_interval=1.0),
            connect(client_store, sid) as agent,
        ):
            for pause in _pauses(deliveries + 3):
                await asyncio.sleep(pause)
                message = create_user_message("ping")
                await agent.followup(message)
                returned = time.perf_counter()
                while message.id not in queued:
                    await asyncio.sleep(0.0005)
                latencies.append(queued[message.id] - returned)
                await agent.wait_idle(poll_interval=0.005)
    return latencies[3:]  # the first deliveries also load the session


async def _langgraph_send(saver: AsyncPostgresSaver, thread: Any, message: dict[str, str]) -> None:
    """Append ``message`` to the thread's state: a child of its latest checkpoint."""
    current = await saver.aget_tuple(thread)
    previous = empty_checkpoint() if current is None else copy_checkpoint(current.checkpoint)
    checkpoint = empty_checkpoint()  # a new id and time
    last = previous["channel_versions"].get("messages")
    version = saver.get_next_version(None if last is None else str(last), None)
    messages = [*previous["channel_values"].get("messages", []), message]
    checkpoint["channel_values"] = {"messages": messages}
    checkpoint["channel_versions"] = {"messages": version}
    config = thread if current is None else current.config
    await saver.aput(config, checkpoint, {"source": "input", "step": -1}, {"messages": version})


async def _langgraph_latencies(dsn: str, deliveries: int, poll: float) -> list[float]:
    """The peer driven like :func:`_latencies`: the client's write returns, then the
    worker's next poll of the thread finds the message."""
    thread: Any = {"configurable": {"thread_id": f"bench-{poll}", "checkpoint_ns": ""}}
    seen: dict[str, float] = {}
    latencies = []
    async with (
        AsyncPostgresSaver.from_conn_string(dsn) as client,
        AsyncPostgresSaver.from_conn_string(dsn) as worker,
    ):
        await client.setup()
        stop = asyncio.Event()

        async def serve() -> None:
            known = 0
            while not stop.is_set():
                current = await worker.aget_tuple(thread)
                if current is not None:
                    messages = current.checkpoint["channel_values"].get("messages", [])
                    for message in messages[known:]:
                        seen.setdefault(message["id"], time.perf_counter())
                    known = len(messages)
                await asyncio.sleep(poll)

        serving = asyncio.create_task(serve())
        for pause in _pauses(deliveries + 3):
            await asyncio.sleep(pause)
            message = {"id": new_message_id(), "role": "user", "content": "ping"}
            await _langgraph_send(client, thread, message)
            returned = time.perf_counter()
            while message["id"] not in seen:
                await asyncio.sleep(0.0005)
            latencies.append(seen[message["id"]] - returned)
        stop.set()
        await serving
    return latencies[3:]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _latency_cases(dsn: str, options: Options) -> list[Case]:
    deliveries = 20 if options.quick else 200
    with tempfile.TemporaryDirectory() as folder:
        sqlite = asyncio.run(_latencies(f"sqlite:///{Path(folder) / 's.db'}", deliveries))
    postgres = asyncio.run(_latencies(_schema(dsn, "bench_latency"), deliveries))
    peer = _schema(dsn, "bench_langgraph_delivery")
    polled = {
        every: asyncio.run(_langgraph_latencies(peer, deliveries, seconds))
        for every, seconds in (("50 ms", 0.05), ("1 ms", 0.001))
    }
    notes = (
        f"{deliveries} sequential deliveries to one served session/thread; LangGraph has "
        "no mailbox, idempotency or wake-up (see the module docstring)"
    )
    return [
        Case(
            SUITE,
            f"delivery latency {name}",
            "s",
            {
                "dsh postgres (NOTIFY)": _percentile(postgres, q),
                "dsh sqlite (poll 50 ms)": _percentile(sqlite, q),
                **{
                    f"LangGraph PostgresSaver (poll {every})": _percentile(values, q)
                    for every, values in polled.items()
                },
            },
            notes=notes,
        )
        for name, q in (("p50", 0.5), ("p99", 0.99))
    ]


# --- turns per second -------------------------------------------------------------------


def _start_worker(url: str) -> subprocess.Popen[bytes]:
    command = ["worker", "--store", url, "--agent", "_service_agent:echo", "--idle-release", "0.5"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(BENCH_DIR)])}
    return subprocess.Popen(
        [sys.executable, "-m", "dsh_cli", *command],
        cwd=BENCH_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
    )


async def _turns(url: str, workers: int, sessions: int) -> float:
    async with open_store(url) as store:
        sids = await _new_sessions(store, sessions)
        for sid in sids:
            async with connect(store, sid) as agent:
                await agent.followup(create_user_message("go"))
        started = time.perf_counter()
        processes = [_start_worker(url) for _ in range(workers)]
        try:
            mailbox = open_mailbox(store)
            while await mailbox.waiting():
                await asyncio.sleep(0.02)
            elapsed = time.perf_counter() - started
            await mailbox.close()
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(timeout=60)
        for sid in sids:
            session, _ = await store.read(sid)
            assert [e.type for e in session.events].count("turn/end") == 1, sid
    return elapsed / sessions


def _throughput_case(dsn: str, options: Options) -> Case:
    sessions = 40 if options.quick else SESSIONS
    values = {
        f"{n} worker{'s' if n > 1 else ''}": asyncio.run(
            _turns(_schema(dsn, f"bench_turns_{n}"), n, sessions)
        )
        for n in (1, 2, 4)
    }
    return Case(
        SUITE,
        f"seconds per turn, {sessions} sessions on PostgreSQL",
        "s",
        values,
        notes="wall time from starting the workers until every mailbox entry is answered "
        "(process start-up included)",
    )


def run(options: Options) -> list[Case]:
    """The service suite's cases."""
    with _server() as dsn:
        return [*_latency_cases(dsn, options), _throughput_case(dsn, options)]
