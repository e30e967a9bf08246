"""Service suite: the agent as a service (``connect`` → mailbox → ``Worker``).

- **Delivery latency**: from the moment a client's ``followup`` returns (durable in the
  mailbox) to the moment the owning worker's inbox holds the message, p50 and p99 over
  sequential deliveries to one served session, on PostgreSQL (the owner is woken by
  ``NOTIFY``) and SQLite (the owner polls the mailbox every 50 ms). Client and worker run
  in one process on one event loop, with separate store objects.
- **Turns per second**: 200 sessions on PostgreSQL each get one followup; 1, 2 and 4
  ``dsh worker`` processes (instant scripted model) serve them until every turn ended.
  The figure is turns / wall seconds, reported as seconds per turn so the ratios read
  like the other suites (lower is better).

No peer runs here: LangGraph's PostgreSQL checkpointer has no delivery mailbox or
worker pool to drive the same way (its "double-texting" lives in the paid platform).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from _harness import Case, Options

from dsh_agent import AgentLoop, LiveUpdate, MessageQueued, Worker, connect
from dsh_llm import create_user_message
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
            for _ in range(deliveries + 3):
                message = create_user_message("ping")
                await agent.followup(message)
                returned = time.perf_counter()
                while message.id not in queued:
                    await asyncio.sleep(0.0005)
                latencies.append(queued[message.id] - returned)
                await agent.wait_idle(poll_interval=0.005)
    return latencies[3:]  # the first deliveries also load the session


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _latency_cases(dsn: str, options: Options) -> list[Case]:
    deliveries = 20 if options.quick else 200
    with tempfile.TemporaryDirectory() as folder:
        sqlite = asyncio.run(_latencies(f"sqlite:///{Path(folder) / 's.db'}", deliveries))
    postgres = asyncio.run(_latencies(_schema(dsn, "bench_latency"), deliveries))
    notes = f"{deliveries} sequential followups to one served session"
    return [
        Case(
            SUITE,
            f"delivery latency {name}",
            "s",
            {"postgres": _percentile(postgres, q), "sqlite": _percentile(sqlite, q)},
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
