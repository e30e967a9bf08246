"""Issue 33: followers are woken by a ``NOTIFY`` sent after each flush commits (not
inside its transaction), so a writer can die after its commit and before its
notification. A follower must still see every event exactly once, in order: it
re-reads from its last seq at every wake-up, polls as a fallback, and the next owner
of a session wakes its followers: its load flushes (``session/end-seed``)."""

from __future__ import annotations

import asyncio
import collections
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from session_stores.scenarios import store_completed_turn

from dsh_session import LogEvent
from dsh_session._session import Session
from dsh_session.stores import PostgresSessionStore
from session_stores_pg.soak import SESSIONS, TESTS_DIR, Soak, stored_rows

FOLLOWED = [f"soak-{number:04d}" for number in (0, 1, 2, 3, 17, 101, 150, 199)]
"""The soak's four hot sessions (most take-overs and fenced writers) and four others."""


def _start_follower(dsn: str, report: Path, poll: float) -> subprocess.Popen[bytes]:
    arguments = [dsn, str(report), str(poll), *FOLLOWED]
    return subprocess.Popen(
        [sys.executable, "-m", "session_stores_pg.follow_reader", *arguments],
        cwd=TESTS_DIR,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _delivered(report: Path) -> dict[str, list[tuple[int, str]]]:
    seen: dict[str, list[tuple[int, str]]] = collections.defaultdict(list)
    for line in report.read_text().splitlines():
        if line != "ready":
            session_id, seq, digest = line.split()
            seen[session_id].append((int(seq), digest))
    return seen


async def test_followers_see_every_event_once_in_order_while_writers_are_killed(
    postgres_dsn: str, tmp_path: Path
) -> None:
    async with PostgresSessionStore(postgres_dsn) as store:
        for number in range(SESSIONS):
            store.attach(Session.create(f"soak-{number:04d}"))
    report = tmp_path / "followed.txt"
    follower = _start_follower(postgres_dsn, report, poll=0.5)
    try:
        deadline = time.monotonic() + 120
        while "ready" not in (report.read_text() if report.exists() else ""):
            assert follower.poll() is None, follower.communicate()[1].decode()
            assert time.monotonic() < deadline, "the follower never started"
            await asyncio.sleep(0.05)
        soak = Soak(postgres_dsn, tmp_path, random.Random())
        await asyncio.to_thread(soak.run, 15, 1.0)
        stored = stored_rows(postgres_dsn)
        wanted = {sid: stored[sid] for sid in FOLLOWED}
        deadline = time.monotonic() + 60
        while _delivered(report) != wanted and time.monotonic() < deadline:
            assert follower.poll() is None, follower.communicate()[1].decode()
            await asyncio.sleep(0.1)
    finally:
        follower.send_signal(signal.SIGKILL)
        follower.communicate()
    delivered = _delivered(report)
    for sid in FOLLOWED:  # every stored event once, in seq order, with its bytes
        assert delivered[sid] == stored[sid], sid
    assert soak.kills > 8 and sum(len(rows) for rows in wanted.values()) > len(FOLLOWED)


async def test_the_next_owner_wakes_followers_a_killed_writer_never_told(
    postgres_dsn: str,
) -> None:
    async with PostgresSessionStore(postgres_dsn) as writer:
        session = await store_completed_turn(writer)
    async with PostgresSessionStore(postgres_dsn, mode="read") as reader:
        # No fallback poll within the test: only a notification can wake it.
        follower = reader.follow(session.id, poll_interval=600)
        seen: list[LogEvent] = []

        async def drain() -> None:
            async for event in follower:
                seen.append(event)

        task = asyncio.create_task(drain())
        try:
            async with asyncio.timeout(30):
                while len(seen) < session.seq:
                    await asyncio.sleep(0.02)
            died = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "session_stores_pg.lost_notify_writer",
                postgres_dsn,
                session.id,
                cwd=TESTS_DIR,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            assert died.stdin is not None and died.stdout is not None
            loaded = int(await died.stdout.readline())  # what its load wrote is told
            async with asyncio.timeout(30):
                while len(seen) < loaded:
                    await asyncio.sleep(0.02)
            died.stdin.write(b"go\n")
            await died.stdin.drain()
            assert await died.wait() == -signal.SIGKILL
            stored, _ = await reader.read(session.id)
            assert stored.seq > session.seq  # committed, and no follower was told
            await asyncio.sleep(1.0)
            assert len(seen) == loaded
            async with PostgresSessionStore(postgres_dsn) as next_owner:
                reloaded = await next_owner.load(session.id)  # its flush wakes the follower
                async with asyncio.timeout(30):
                    while len(seen) < reloaded.seq:
                        await asyncio.sleep(0.02)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await follower.aclose()
    assert seen == list(reloaded.events)
