"""A tool that runs only once a person approved it, across a process exit.

Run: python examples/approvals.py (a scripted model, so no key or network is needed).
The first agent asks and goes idle waiting; it is closed as a process would exit.
A second agent over the session loaded from the store approves, and the same turn goes
on: the approved call runs once, the call that ran before the wait is not rerun.
"""

import asyncio
import tempfile
from pathlib import Path

from dsh_agent import AgentLoop, tool
from dsh_llm import CallId, TextBlock, create_user_message
from dsh_llm.testing import Response, ScriptedAdapter, reply
from dsh_session import Session, SqliteSessionStore
from dsh_session.events import AssistantMessageEvent


@tool
async def disk_usage(path: str) -> str:
    """How full a disk is."""
    return f"{path} is 93% full"


@tool(requires_approval=True)
async def delete_logs(path: str) -> str:
    """Delete old log files."""
    print(f"  (deleting logs under {path})")
    return f"deleted 4 GB of logs under {path}"


def agent(session: Session, store: SqliteSessionStore, answers: list[Response]) -> AgentLoop:
    return AgentLoop(
        session=session,
        adapter=ScriptedAdapter(answers),
        provider="test",
        model="scripted",
        tools=[disk_usage, delete_logs],
        store=store,
    )


async def main(db: Path) -> None:
    calls = [
        {"call_id": "call-du", "name": "disk_usage", "arguments": {"path": "/var"}},
        {"call_id": "call-rm", "name": "delete_logs", "arguments": {"path": "/var/log"}},
    ]
    async with SqliteSessionStore(db) as store:
        first = agent(Session.create(), store, [reply(tool_calls=calls)])
        first.followup(create_user_message(content="Free some space.", source={"kind": "user"}))
        await first.when_idle()  # idle, the turn open, waiting
        for waiting in first.pending_approvals:
            print(f"waiting: {waiting.tool_name} {waiting.arguments} ({waiting.call_id})")
        session_id = first.id
        await first.aclose()  # the process could exit here

    async with SqliteSessionStore(db) as store:
        session = await store.load(session_id)
        second = agent(session, store, ["Deleted the old logs; /var has room again."])
        await second.approve(CallId("call-rm"))  # or: .deny(CallId("call-rm"), "not today")
        await second.when_idle()
        answer = next(e for e in reversed(session.events) if isinstance(e, AssistantMessageEvent))
        print(" ".join(b.text for b in answer.data.message.content if isinstance(b, TextBlock)))
        await second.aclose()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(main(Path(scratch) / "agent.db"))
