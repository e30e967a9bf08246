"""A process that sends one prompt through a retrying agent over a SQLite store and
reports each durable retry on stdout; the resume test kills it during a backoff wait.

Usage: ``python crash_child.py DB_PATH BASE_URL`` (prints the session id first)."""

from __future__ import annotations

import asyncio
import logging
import sys

from dsh_agent import AgentLoop, RetryPolicy, run
from dsh_llm import create_user_message
from dsh_llm.providers import OpenAIChatAdapter
from dsh_session import Session
from dsh_session.stores import SqliteSessionStore

POLICY = RetryPolicy(max_retries=3, initial_delay_ms=1, max_delay_ms=600_000, jitter_ratio=0)
"""Short local waits; a provider's retry-after of up to ten minutes is honoured."""


async def main(db_path: str, base_url: str) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    async with SqliteSessionStore(db_path) as store:
        session = Session.create()
        print(session.id, flush=True)
        agent = AgentLoop(
            session=session,
            adapter=OpenAIChatAdapter(base_url=base_url, api_key="k"),
            provider="openai",
            model="served-model",
            store=store,
            retry=POLICY,
        )
        message = create_user_message(content="survive this", source={"kind": "user"})
        await run(agent, message, raise_on_error=False)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
