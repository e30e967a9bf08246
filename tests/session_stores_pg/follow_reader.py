"""A follower process for the kill tests: follows sessions from seq 0 and reports
every event it is given, until killed.

    python -m session_stores_pg.follow_reader DSN REPORT POLL_INTERVAL SESSION_ID...

Each delivered event appends a line ``SESSION_ID SEQ DIGEST`` (the sha256 of its wire
JSON) to the report; the first line, ``ready``, comes once every follower has read.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from dsh_session.stores import PostgresSessionStore
from dsh_session.stores._codec import dump_event
from session_stores_pg.soak_worker import digest


async def _follow(
    store: PostgresSessionStore, session_id: str, poll: float, report: TextIO
) -> None:
    async for event in store.follow(session_id, poll_interval=poll):
        report.write(f"{session_id} {event.seq} {digest(dump_event(event))}\n")
        report.flush()


async def main(dsn: str, path: str, poll: float, session_ids: list[str]) -> None:
    with open(path, "a", encoding="utf-8") as report:
        async with PostgresSessionStore(dsn, mode="read", pool_size=2) as store:
            tasks = [asyncio.create_task(_follow(store, sid, poll, report)) for sid in session_ids]
            await asyncio.sleep(0.5)
            report.write("ready\n")
            report.flush()
            await asyncio.gather(*tasks)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]))
