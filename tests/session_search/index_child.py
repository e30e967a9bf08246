"""Child process of the index kill tests, killed with SIGKILL by the parent.

Run as ``python -m session_search.index_child ROLE DATABASE REPORT`` from the ``tests``
directory, on a layout-1 database:

- ``write SESSION_ID``: load (or create) the session and write turns forever, each
  prompt and answer holding the word ``zebra``, flushing after each turn and then
  writing ``flushed <seq>`` to REPORT.
- ``search``: write ``searching`` to REPORT, run one search (which catches the index up
  with every log, a few events per transaction so that a kill lands between two of
  them), then write ``done``.
"""

from __future__ import annotations

import asyncio
import sys

from session_stores.scenarios import answer, open_turn

from dsh_session import Session, SessionNotFoundError
from dsh_session.stores import SqliteSessionStore, _search_fts5


async def _write(database: str, report_path: str, session_id: str) -> None:
    store = SqliteSessionStore(database)
    try:
        session = await store.load(session_id)
    except SessionNotFoundError:
        session = Session.create(session_id)
        store.attach(session)
    with open(report_path, "a", encoding="utf-8") as report:
        while True:
            turn = open_turn(session, f"zebra question {session.seq}")
            answer(session, turn, 1, f"zebra answer {session.seq}")
            await store.flush(session)
            report.write(f"flushed {session.seq}\n")
            report.flush()


async def _search(database: str, report_path: str) -> None:
    _search_fts5._CATCH_UP_EVENTS = 7  # many small catch-up transactions to land a kill in
    store = SqliteSessionStore(database)
    with open(report_path, "a", encoding="utf-8") as report:
        report.write("searching\n")
        report.flush()
        await store.search("zebra", limit=1)
        report.write("done\n")
        report.flush()


if __name__ == "__main__":
    role, database, report = sys.argv[1:4]
    if role == "write":
        asyncio.run(_write(database, report, sys.argv[4]))
    else:
        asyncio.run(_search(database, report))
