"""An agent in a process of its own, for the restart tests.

``python agent_process.py ask STORE WORK`` runs a turn whose step calls ``count`` (no
approval) and ``apply`` (approval required) over the store at URL ``STORE``, prints
``waiting <session> <call id>`` once idle, then sleeps until it is killed.
``python agent_process.py approve|deny STORE WORK SESSION CALL`` loads the session into a
new agent, decides the call, waits until the turn ends and prints ``done``. Each run
appends the requests its model received to ``WORK/requests.jsonl``; each tool run
appends a line to ``WORK/<tool>.count`` (the side effect the tests count).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from dsh_agent import AgentLoop, tool
from dsh_llm import CallId, create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session
from dsh_session.stores import SessionStore, open_store

DENY_REASON = "not on a Friday"


def _tools(work: Path) -> list[object]:
    def record(name: str) -> None:
        with (work / f"{name}.count").open("a") as counter:
            counter.write("ran\n")

    @tool
    async def count(n: int) -> str:
        """Count to n."""
        record("count")
        return str(n)

    @tool(requires_approval=True)
    async def apply(change: str) -> str:
        """Apply a change to production."""
        record("apply")
        return f"applied {change}"

    return [count, apply]


def _agent(
    session: Session, adapter: ScriptedAdapter, store: SessionStore, work: Path
) -> AgentLoop:
    return AgentLoop(
        session=session,
        adapter=adapter,
        provider="test",
        model="scripted",
        tools=_tools(work),  # type: ignore[arg-type]
        store=store,
    )


def _save_requests(adapter: ScriptedAdapter, work: Path) -> None:
    with (work / "requests.jsonl").open("a") as out:
        for request in adapter.requests:
            out.write(request.model_dump_json() + "\n")


async def ask(url: str, work: Path) -> None:
    calls = [
        {"name": "count", "arguments": {"n": 3}, "call_id": "call-count"},
        {"name": "apply", "arguments": {"change": "v2"}, "call_id": "call-apply"},
    ]
    adapter = ScriptedAdapter([reply(text="Counting, then applying.", tool_calls=calls)])
    store = open_store(url)
    agent = _agent(Session.create(), adapter, store, work)
    agent.followup(create_user_message(content="Ship v2.", source={"kind": "user"}))
    await agent.when_idle()
    _save_requests(adapter, work)
    (waiting,) = agent.pending_approvals
    print("waiting", agent.id, waiting.call_id, flush=True)
    await asyncio.sleep(3600)  # killed here, waiting


async def decide(decision: str, url: str, work: Path, session_id: str, call_id: CallId) -> None:
    adapter = ScriptedAdapter(["Done." if decision == "approve" else "Understood, I left it."])
    async with open_store(url) as store:
        agent = _agent(await store.load(session_id), adapter, store, work)
        assert [p.call_id for p in agent.pending_approvals] == [call_id]
        if decision == "approve":
            await agent.approve(call_id)
        else:
            await agent.deny(call_id, DENY_REASON)
        await agent.when_idle()
        await agent.aclose()
    _save_requests(adapter, work)
    print("done", flush=True)


if __name__ == "__main__":
    mode, url, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    if mode == "ask":
        asyncio.run(ask(url, work))
    else:
        asyncio.run(decide(mode, url, work, sys.argv[4], CallId(sys.argv[5])))
