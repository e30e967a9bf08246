"""A parent agent that delegates to a child whose model never answers, over a SQLite
store; the crash test SIGKILLs it while the child waits.

Usage: ``python crash_parent.py DB_PATH`` (prints ``PARENT <id>``, then
``CHILD <id>`` once the child's request is out)."""

from __future__ import annotations

import asyncio
import sys

from dsh_agent import AgentLoop, agent_tool, run
from dsh_llm import GenerateRequest
from dsh_llm.testing import FunctionAdapter, ScriptedAdapter, reply
from dsh_session import Session
from dsh_session.stores import SqliteSessionStore


async def main(db_path: str) -> None:
    async with SqliteSessionStore(db_path) as store:

        def child(session: Session) -> AgentLoop:
            async def hang(request: GenerateRequest) -> str:
                print("CHILD", session.id, flush=True)
                await asyncio.sleep(3600)
                return "never"

            return AgentLoop(
                session=session, adapter=FunctionAdapter(hang), provider="p", model="c", store=store
            )

        research = agent_tool(child, name="research", description="Ask a research agent.")
        parent = AgentLoop(
            session=Session.create(),
            adapter=ScriptedAdapter(
                [reply(tool_calls=[{"name": "research", "arguments": {"prompt": "dig"}}])]
            ),
            provider="p",
            model="m",
            tools=[research],
            store=store,
        )
        print("PARENT", parent.id, flush=True)
        await run(parent, "find out", raise_on_error=False)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
