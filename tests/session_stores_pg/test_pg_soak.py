"""Soak: 8 worker processes serve turns of 200 sessions on one PostgreSQL database,
each turn taking ownership (some by take-over from a live writer), while the test
SIGKILLs workers at random and starts replacements. At the end every event a worker
saw flushed is stored exactly once at its seq, with its bytes; every session
validates, holds no gap or fork, and its model requests reconstruct from the log."""

from __future__ import annotations

import collections
import json
import os
import random
from pathlib import Path

import pytest

from dsh_agent import reconstruct_requests
from dsh_session._session import Session
from dsh_session.stores import PostgresSessionStore
from session_stores_pg.soak import SESSIONS, WORKERS, Soak, stored_rows


async def _soak(dsn: str, folder: Path, seconds: float, mean_kill_interval: float) -> None:
    seed = int(os.environ.get("DSH_SOAK_SEED", "0")) or random.randrange(1 << 30)
    print(f"postgres soak seed {seed} (set DSH_SOAK_SEED to replay the kill choices)")
    async with PostgresSessionStore(dsn) as store:  # every session exists before the workers
        for number in range(SESSIONS):
            store.attach(Session.create(f"soak-{number:04d}"))
    soak = Soak(dsn, folder, random.Random(seed))
    soak.run(seconds, mean_kill_interval)

    lines = soak.lines()
    outcomes = collections.Counter(line.strip() for line in lines if not line.startswith("{"))
    flushed: dict[str, dict[int, str]] = collections.defaultdict(dict)
    for line in lines:
        if line.startswith("{"):
            batch = json.loads(line)
            for seq, digest in batch["e"]:
                assert flushed[batch["s"]].setdefault(seq, digest) == digest, "a forked seq"
    stored = stored_rows(dsn)
    for session_id, events in flushed.items():
        by_seq = dict(stored[session_id])
        assert all(by_seq.get(seq) == digest for seq, digest in events.items()), session_id

    requests = 0
    async with PostgresSessionStore(dsn, mode="read") as store:
        headers = await store.list_sessions()
        for header in headers:
            session, _ = await store.read(header.id)  # validates the whole log
            requests += len(reconstruct_requests(session.events))
    stored_count = sum(len(rows) for rows in stored.values())
    total = sum(len(seqs) for seqs in flushed.values())
    print(
        f"{soak.kills} kills; {len(headers)} sessions; {outcomes['turn']} turns completed; "
        f"{outcomes['conflict']} loads refused; {outcomes['took-over']} take-overs, "
        f"{outcomes['fenced']} writers fenced by one; "
        f"{total} flushed events reported, "
        f"{stored_count} stored; {requests} requests reconstructed"
    )
    assert outcomes["turn"] > 0 and len(headers) == SESSIONS and total > 0
    assert soak.kills > WORKERS and requests >= outcomes["turn"]
    assert outcomes["took-over"] > 0 and outcomes["conflict"] + outcomes["fenced"] > 0, (
        "no contention"
    )


async def test_eight_killed_and_replaced_workers_lose_and_fork_nothing(
    postgres_dsn: str, tmp_path: Path
) -> None:
    await _soak(postgres_dsn, tmp_path, seconds=15, mean_kill_interval=1.0)


@pytest.mark.slow
async def test_a_long_soak_of_killed_workers_loses_and_forks_nothing(
    postgres_dsn: str, tmp_path: Path
) -> None:
    await _soak(postgres_dsn, tmp_path, seconds=180, mean_kill_interval=1.0)
