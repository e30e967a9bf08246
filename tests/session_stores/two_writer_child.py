"""Child process of the two-writer tests: one of several writers of the same session.

Run as ``python -m session_stores.two_writer_child MODE BACKEND LOCATION SESSION_ID
REPORT SEED`` from the ``tests`` directory; the session must already be stored.

- ``once``: try to load the session one time. If another writer owns it, write
  ``conflict <holder>`` and exit; otherwise write a turn whose tool output is
  :data:`LOSER_MARK`, flush it and write ``wrote`` (what a second writer could do
  before sessions had owners).
- ``own``: load the session, writing ``conflict`` and retrying while another writer
  owns it; once loaded, write turns until killed, reporting every flush the way
  ``crash_writer`` does (``ready <seq>``, then the durable events and ``flushed <seq>``).
"""

from __future__ import annotations

import asyncio
import random
import sys

from dsh_session.stores import (
    JsonlSessionStore,
    SessionConflictError,
    SessionStore,
    SqliteSessionStore,
)

from .crash_writer import _checkpointed_turn, _Reporter
from .scenarios import complete_turn

LOSER_MARK = "written by the writer that should have lost"
RETRY_PAUSE = 0.005
"""Seconds an ``own`` writer waits before asking for the session again."""


def _open(backend: str, location: str) -> SessionStore:
    if backend == "sqlite":
        return SqliteSessionStore(location)
    return JsonlSessionStore(location)


async def _once(store: SessionStore, session_id: str, report_path: str) -> None:
    with open(report_path, "a", encoding="utf-8") as report:
        try:
            session = await store.load(session_id)
        except SessionConflictError as error:
            report.write(f"conflict {error.holder}\n")
            return
        complete_turn(session, tool_output=LOSER_MARK)
        await store.flush(session)
        report.write("wrote\n")


async def _own(store: SessionStore, session_id: str, report_path: str, seed: int) -> None:
    rng = random.Random(seed)
    with open(report_path, "a", encoding="utf-8") as report:
        while True:
            try:
                session = await store.load(session_id)
                break
            except SessionConflictError as error:
                report.write(f"conflict {error.holder}\n")
                report.flush()
                await asyncio.sleep(RETRY_PAUSE)
        reporter = _Reporter(report, session)
        report.write(f"ready {session.seq}\n")
        report.flush()
        while True:
            await _checkpointed_turn(store, reporter, "x" * rng.choice([10, 10, 10, 100_000]))


async def main(mode: str, backend: str, location: str, session_id: str, report: str) -> None:
    store = _open(backend, location)
    if mode == "once":
        await _once(store, session_id, report)
        await store.close()
    else:
        await _own(store, session_id, report, int(sys.argv[6]))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
