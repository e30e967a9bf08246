"""A writer process for the follow test: stores TURNS turns of one session, flushing
every few events, then prints the number of events stored and exits.

    python -m session_stores_pg.follow_writer DSN SESSION_ID TURNS
"""

from __future__ import annotations

import asyncio
import sys

from session_stores.scenarios import complete_turn

from dsh_session.stores import PostgresSessionStore


async def main(dsn: str, session_id: str, turns: int) -> None:
    async with PostgresSessionStore(dsn) as store:
        session = await store.load(session_id)
        for _ in range(turns):
            complete_turn(session)
            await store.flush(session)
        print(session.seq, flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
