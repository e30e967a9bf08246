"""A run with per-run options in one process, its approval in another, for
test_run_options_across_wait.py.

``python run_options_process.py ask STORE WORK`` runs ``clean up`` with settings,
instructions and an output type over the store at URL ``STORE``, stops at the approval
wait, closes and prints ``waiting <session id>``. ``python run_options_process.py
approve STORE WORK SESSION`` reopens the session in a new loop, approves ``rm``, waits
until the turn ends and prints ``done``. Each appends the requests its model received
to ``WORK/requests.jsonl``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from pydantic import BaseModel

from dsh_agent import AgentLoop, ModelSettings, run, tool
from dsh_llm import CallId
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, SessionStore
from dsh_session.stores import open_store


class Answer(BaseModel):
    text: str


@tool
async def look(path: str) -> str:
    """Read a path."""
    return f"contents of {path}"


@tool(requires_approval=True)
async def delete(path: str) -> str:
    """Delete a path."""
    return f"deleted {path}"


def _agent(session: Session, adapter: ScriptedAdapter, store: SessionStore) -> AgentLoop:
    return AgentLoop(
        session=session,
        adapter=adapter,
        provider="test",
        model="scripted",
        tools=[look, delete],
        store=store,
    )


def _save_requests(adapter: ScriptedAdapter, work: Path) -> None:
    with (work / "requests.jsonl").open("a") as out:
        for request in adapter.requests:
            out.write(request.model_dump_json() + "\n")


async def ask(url: str, work: Path) -> None:
    calls = [
        {"call_id": "l1", "name": "look", "arguments": {"path": "a"}},
        {"call_id": "rm", "name": "delete", "arguments": {"path": "c"}},
    ]
    adapter = ScriptedAdapter([reply(tool_calls=calls)])
    async with open_store(url) as store:
        agent = _agent(Session.create(), adapter, store)
        settings = ModelSettings(temperature=0, max_tokens=77)
        await run(
            agent, "clean up", output_type=Answer, settings=settings, instructions="Be brief."
        )
        await agent.aclose()
    _save_requests(adapter, work)
    print("waiting", agent.id, flush=True)


async def approve(url: str, work: Path, session_id: str) -> None:
    answer = {"call_id": "out", "name": "final_result", "arguments": {"text": "cleaned"}}
    adapter = ScriptedAdapter([reply(tool_calls=[answer])])
    async with open_store(url) as store:
        agent = _agent(await store.load(session_id), adapter, store)
        await agent.approve(CallId("rm"))
        await agent.when_idle()
        await agent.aclose()
    _save_requests(adapter, work)
    print("done", flush=True)


if __name__ == "__main__":
    mode, url, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    if mode == "ask":
        asyncio.run(ask(url, work))
    else:
        asyncio.run(approve(url, work, sys.argv[4]))
