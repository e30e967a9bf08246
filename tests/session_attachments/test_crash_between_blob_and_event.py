"""A writer killed (SIGKILL, a real child process) at any moment never leaves a log
citing bytes that are not durable: each load finds every flushed message, and the
attachments of every message in the log, whole."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dsh_llm import ImageBlock
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore

TESTS_DIR = Path(__file__).resolve().parents[1]


@pytest.fixture(params=["sqlite", "jsonl", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    backend = str(request.param)
    if backend == "postgres":
        return backend, str(request.getfixturevalue("postgres_dsn"))
    return backend, str(tmp_path / ("s.db" if backend == "sqlite" else "s"))


def _open(backend: str, where: str) -> SessionStore:
    if backend == "sqlite":
        return SqliteSessionStore(where)
    if backend == "jsonl":
        return JsonlSessionStore(where)
    from dsh_session.stores import PostgresSessionStore

    return PostgresSessionStore(where)


def _run_child(backend: str, where: str, report: Path, mode: str, kill_after: float | None) -> None:
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "session_attachments.crash_child",
            backend,
            where,
            "s-1",
            str(report),
            mode,
        ],
        cwd=TESTS_DIR,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        if kill_after is None:
            child.wait(timeout=60)
            return
        deadline = time.monotonic() + 60
        while "saved" not in (report.read_text() if report.exists() else ""):
            if child.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"child did not start: {child.communicate()[1].decode()}")
            time.sleep(0.005)
        time.sleep(kill_after)
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
        child.communicate()
    assert child.returncode == -signal.SIGKILL


def _reported(report: Path, word: str) -> list[str]:
    return [line.split()[1] for line in report.read_text().splitlines() if line.startswith(word)]


async def test_killed_after_the_blob_before_the_flush_the_log_loads_without_the_message(
    location: tuple[str, str], tmp_path: Path
) -> None:
    backend, where = location
    report = tmp_path / "report"
    _run_child(backend, where, report, "kill-before-flush", kill_after=None)
    (saved,) = _reported(report, "saved")
    assert _reported(report, "flushed") == []
    async with _open(backend, where) as store:
        session = await store.load("s-1")
        assert session.derive_messages() == ()
        # the bytes were durable before the message existed: saving them again is a no-op
        ref = await store.save_attachment(await _bytes_of(store, saved), media_type="image/png")
        assert ref.sha256 == saved


async def _bytes_of(store: SessionStore, sha: str) -> bytes:
    data = store._get_blob(sha)
    assert data is not None
    return data


async def test_sigkill_at_random_moments_never_leaves_a_log_citing_missing_bytes(
    location: tuple[str, str], tmp_path: Path
) -> None:
    backend, where = location
    rng = random.Random(7)
    report = tmp_path / "report"
    _run_child(backend, where, report, "loop", kill_after=rng.uniform(0.05, 0.4))
    flushed = _reported(report, "flushed")
    saved = set(_reported(report, "saved"))
    async with _open(backend, where) as store:
        session = await store.load("s-1")  # checks every attachment's bytes
        messages = session.derive_messages()
        ids = [message.id for message in messages]
        assert ids[: len(flushed)] == flushed  # every flushed message, in order
        for message in messages:
            block = message.content[1]
            assert isinstance(block, ImageBlock) and block.attachment is not None
            assert block.attachment.sha256 in saved
            assert block.attachment.matches(await store.read_attachment(block.attachment))
