"""A writer process that dies between a flush's commit and its notification: it
loads a session, prints how many events it holds, waits for a line on stdin, stores
one more turn, and is SIGKILLed by itself where the store hands the news to its
notifier, so no follower is told.

    python -m session_stores_pg.lost_notify_writer DSN SESSION_ID
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

from session_stores.scenarios import complete_turn

from dsh_session.stores import PostgresSessionStore
from dsh_session.stores.postgres._notify import Notifier


def _die(*_: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


async def main(dsn: str, session_id: str) -> None:
    store = PostgresSessionStore(dsn)
    session = await store.load(session_id)
    print(session.seq, flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    Notifier.announce = _die  # type: ignore[method-assign,assignment]
    complete_turn(session)
    await store.flush(session)
    raise AssertionError("the writer outlived its flush's notification")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
