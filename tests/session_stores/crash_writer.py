"""Child process of the crash test: writes turns to a store until it is killed.

Run as ``python -m session_stores.crash_writer BACKEND LOCATION SESSION_ID REPORT SEED``
from the ``tests`` directory. It loads the session (or creates and flushes it), writes
``ready``, then writes turns forever, flushing at the agent loop's checkpoints (after
the prompt and request header, after each ``tool/call``, at turn end). After each
flush *returns* it appends the newly durable events (wire JSON, one per line) and then
``flushed <seq>`` to REPORT, so the parent knows exactly what was durable when it
killed the process.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from typing import TextIO

from dsh_session._session import Session
from dsh_session.errors import SessionNotFoundError
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore

from .scenarios import answer, finish_tool, open_turn, request_tools, start_tool


class _Reporter:
    def __init__(self, report: TextIO, session: Session) -> None:
        self.report, self.session, self.reported = report, session, session.seq

    async def flush(self, store: SessionStore) -> None:
        await store.flush(self.session)
        for event in self.session.events[self.reported :]:
            self.report.write(json.dumps(event.model_dump(mode="json")) + "\n")
        self.report.write(f"flushed {self.session.seq}\n")
        self.report.flush()
        self.reported = self.session.seq


async def _checkpointed_turn(store: SessionStore, reporter: _Reporter, output: str) -> None:
    session = reporter.session
    turn = open_turn(session)
    await reporter.flush(store)  # pre-step, and after request/header
    calls = [f"call-{turn}-a", f"call-{turn}-b"]
    request_tools(session, turn, 1, calls)
    for call_id in calls:
        call_seq = start_tool(session, turn, 1, call_id)
        await reporter.flush(store)  # after tool/call, before the tool body runs
        finish_tool(session, turn, 1, call_id, call_seq, output)
    session.append("step/end", {"turn": turn, "step": 1})
    session.append("step/start", {"turn": turn, "step": 2})
    await reporter.flush(store)  # pre-step
    answer(session, turn, 2, "all done here")
    await reporter.flush(store)  # turn end


async def main(backend: str, location: str, session_id: str, report_path: str, seed: int) -> None:
    store: SessionStore = (
        SqliteSessionStore(location) if backend == "sqlite" else JsonlSessionStore(location)
    )
    try:
        session = await store.load(session_id)
    except SessionNotFoundError:
        session = Session.create(session_id)
        store.attach(session)
        await store.flush(session)
    rng = random.Random(seed)
    with open(report_path, "a", encoding="utf-8") as report:
        reporter = _Reporter(report, session)
        report.write(f"ready {session.seq}\n")
        report.flush()
        while True:
            size = rng.choice([10, 10, 10, 300_000])  # big results make multi-page writes
            await _checkpointed_turn(store, reporter, "x" * size)


if __name__ == "__main__":
    backend, location, session_id, report_path, seed = sys.argv[1:]
    asyncio.run(main(backend, location, session_id, report_path, int(seed)))
