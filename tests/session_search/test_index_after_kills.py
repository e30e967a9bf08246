"""Layout 1 indexes for search after the commit (each search catches the index up from
the seq it stopped at), so real processes are killed between an append's commit and its
indexing, and in the middle of a catch-up: after every kill a search finds every
durable message exactly once, and nothing the log does not hold."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from session_stores.scenarios import answer, open_turn
from session_stores.sqlite_files import layout_one

from dsh_session import Session
from dsh_session._surface_view import message_of
from dsh_session.stores import SqliteSessionStore

TESTS_DIR = Path(__file__).resolve().parent.parent


def _start(role: str, database: Path, report: Path, *extra: str) -> subprocess.Popen[bytes]:
    arguments = [role, str(database), str(report), *extra]
    return subprocess.Popen(
        [sys.executable, "-m", "session_search.index_child", *arguments],
        cwd=TESTS_DIR,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_for(child: subprocess.Popen[bytes], report: Path, line: str) -> None:
    deadline = time.monotonic() + 30
    while not (report.exists() and line in report.read_text()):
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            _, stderr = child.communicate()
            raise AssertionError(f"the child never reported {line!r}: {stderr.decode()}")
        time.sleep(0.002)


def _kill(child: subprocess.Popen[bytes]) -> None:
    child.send_signal(signal.SIGKILL)
    child.communicate()
    assert child.returncode == -signal.SIGKILL, "the child must die by SIGKILL, not exit"


def _flushed(report: Path) -> int:
    """The seq up to which the writer's last completed report says events are durable."""
    lines = [line for line in report.read_text().split("\n")[:-1] if line.startswith("flushed ")]
    return int(lines[-1].split()[1]) if lines else 0


async def _logged_messages(database: Path) -> set[tuple[str, int, str]]:
    """(session, seq, message id) of every surface event the logs hold."""
    store = SqliteSessionStore(database, mode="read")
    found: set[tuple[str, int, str]] = set()
    for header in await store.list_sessions():
        session, _ = await store.read(header.id)
        for event in session.events:
            message = message_of(event)
            if message is not None:
                found.add((session.id, event.seq, message.id))
    await store.close()
    return found


async def _found_once(database: Path) -> set[tuple[str, int, str]]:
    """What a writable store's search for the word every message holds finds; each
    message at most once."""
    async with SqliteSessionStore(database) as store:
        hits = await store.search("zebra", limit=1_000_000)
    found = {(hit.session_id, hit.seq, hit.message_id) for hit in hits}
    assert len(found) == len(hits), "a message was found twice"
    return found


def _stamps(database: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Each session's next seq in the log and in the index's state (read only)."""
    db = sqlite3.connect(f"{database.absolute().as_uri()}?mode=ro", uri=True)
    try:
        logged = dict(db.execute("SELECT session_id, max(seq) + 1 FROM dsh_events GROUP BY 1"))
        indexed = {sid: int(stamp) for sid, stamp in db.execute("SELECT * FROM dsh_search_state")}
    finally:
        db.close()
    return logged, indexed


async def test_a_writer_killed_after_its_commits_loses_no_message_to_search(
    tmp_path: Path,
) -> None:
    database = layout_one(tmp_path / "one.db")
    rng = random.Random(33)
    session_id = Session.create().id
    flushed = 0
    for round_number in range(6):
        report = tmp_path / f"writer-{round_number}.txt"
        writer = _start("write", database, report, session_id)
        _wait_for(writer, report, "flushed ")
        time.sleep(rng.uniform(0.0, 0.05))
        _kill(writer)
        assert _flushed(report) > flushed
        flushed = _flushed(report)
        logged = await _logged_messages(database)
        assert max(seq for _, seq, _ in logged) >= flushed - 3, "a durable answer is logged"
        # each search indexes the log so far: the next one goes on from there
        assert await _found_once(database) == logged


async def _append_turns(database: Path, sessions: list[Session], turns: int) -> None:
    """Append ``turns`` turns to each session (a backlog for the next search)."""
    async with SqliteSessionStore(database) as store:
        for session in sessions:
            if session.id in {header.id for header in await store.list_sessions()}:
                session = await store.load(session.id)
            else:
                store.attach(session)
            for _ in range(turns):
                turn = open_turn(session, f"zebra question {session.seq}")
                answer(session, turn, 1, f"zebra answer {session.seq}")
            await store.flush(session)
            store.detach(session)


async def test_a_search_killed_while_it_catches_up_leaves_an_index_that_goes_on(
    tmp_path: Path,
) -> None:
    database = layout_one(tmp_path / "one.db")
    rng = random.Random(34)
    sessions = [Session.create() for _ in range(4)]
    partial = 0
    for round_number in range(12):
        await _append_turns(database, sessions, 60)  # a backlog of several transactions
        report = tmp_path / f"search-{round_number}.txt"
        searcher = _start("search", database, report)
        _wait_for(searcher, report, "searching")
        time.sleep(rng.uniform(0.0, 0.04))
        searcher.send_signal(signal.SIGKILL)
        searcher.communicate()
        if searcher.returncode == 0:
            assert "done" in report.read_text()
            continue  # it caught up before the kill
        assert searcher.returncode == -signal.SIGKILL
        logged, indexed = _stamps(database)
        if any(indexed.get(sid, 0) < head for sid, head in logged.items()) and indexed:
            partial += 1  # killed with part of the backlog indexed
            assert await _found_once(database) == await _logged_messages(database)
        if partial == 3:
            break
    assert partial, "no kill landed in the middle of a catch-up"
    assert await _found_once(database) == await _logged_messages(database)
