"""A worker process of the PostgreSQL soak: serves turns of random sessions until
killed, each turn in a store object of its own (a fenced writer's store is closed
with its refused events, as a real worker would drop them).

    python -m session_stores_pg.soak_worker DSN SESSIONS TAKEOVER_RATE SEED REPORT

Each turn loads a session (``take_over=True`` at the given rate) or creates it, then
runs one turn, flushing at the loop's checkpoints. After every flush that returned
it appends a line ``{"s": id, "e": [[seq, sha256 of the wire JSON], ...]}`` to the
report; other lines count outcomes (``conflict``, ``fenced``, ``raced``, ``turn``,
``took-over``). Half the turns go to 4 hot sessions, so writers meet.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import sys
from typing import TextIO

from session_stores.scenarios import answer, open_turn, request_tools, run_tool

from dsh_session._session import Session
from dsh_session.errors import SessionConflictError, SessionNotFoundError, StoreError
from dsh_session.stores import PostgresSessionStore
from dsh_session.stores._codec import dump_event


def digest(wire: bytes) -> str:
    return hashlib.sha256(wire).hexdigest()[:16]


async def _flush(store: PostgresSessionStore, session: Session, done: int, report: TextIO) -> int:
    await store.flush(session)
    rows = [[e.seq, digest(dump_event(e))] for e in session.events[done:]]
    report.write(json.dumps({"s": session.id, "e": rows}) + "\n")
    report.flush()
    return session.seq


async def _turn(store: PostgresSessionStore, session: Session, done: int, report: TextIO) -> None:
    """One turn: prompt, a tool step, an answer; flushed where the loop flushes."""
    turn = open_turn(session, f"question {session.last_turn + 1}")
    done = await _flush(store, session, done, report)
    call = f"call-{session.id[-6:]}-{turn}"
    request_tools(session, turn, 1, [call])
    done = await _flush(store, session, done, report)
    run_tool(session, turn, 1, call)
    done = await _flush(store, session, done, report)
    session.append("step/end", {"turn": turn, "step": 1})
    session.append("step/start", {"turn": turn, "step": 2})
    answer(session, turn, 2, "the answer is forty two")
    await _flush(store, session, done, report)


async def _serve_one(dsn: str, sid: str, take_over: bool, report: TextIO) -> str:
    store = PostgresSessionStore(dsn, pool_size=1)
    try:
        try:
            session = await store.load(sid, take_over=take_over)
            done = session.seq
            if take_over:
                report.write("took-over\n")
        except SessionNotFoundError:
            session, done = Session.create(sid), 0
            store.attach(session)
        except SessionConflictError:
            return "conflict"  # a live writer owns it
        try:
            await _turn(store, session, done, report)
        except SessionConflictError:
            return "fenced"  # taken over during the turn
        except StoreError as error:
            if done == 0 and "already exists" in str(error):
                return "raced"  # another worker created it first
            raise
        return "turn"
    finally:
        with contextlib.suppress(StoreError):  # a fenced or raced turn's refused events
            await store.close()


async def main(dsn: str, sessions: int, takeover_rate: float, seed: int, path: str) -> None:
    rng = random.Random(seed)
    with open(path, "a", encoding="utf-8") as report:
        report.write("ready\n")
        report.flush()
        while True:
            hot = rng.random() < 0.5  # half the turns go to 4 hot sessions: contention
            sid = f"soak-{rng.randrange(4 if hot else sessions):04d}"
            outcome = await _serve_one(dsn, sid, rng.random() < takeover_rate, report)
            report.write(outcome + "\n")
            report.flush()


if __name__ == "__main__":
    dsn, sessions, rate, seed, path = sys.argv[1:]
    asyncio.run(main(dsn, int(sessions), float(rate), int(seed), path))
