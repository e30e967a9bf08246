"""``dsh sessions show|list`` tell a sub-agent's session from a fork: both name a
``parentSession``, but a sub-agent's (``origin: "subagent"``, written by
``agent_tool``) was delegated to, not cut from its parent's log."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cli.runner import Dsh
from dsh_agent import AgentLoop, agent_tool, run
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, SqliteSessionStore


def _delegate(db: Path) -> tuple[str, str]:
    """A parent session that delegated once to a child, both stored in ``db``."""

    async def write() -> tuple[str, str]:
        async with SqliteSessionStore(db) as store:

            def child(session: Session) -> AgentLoop:
                return AgentLoop(
                    session=session,
                    adapter=ScriptedAdapter(["Paris."]),
                    provider="p",
                    model="child",
                    store=store,
                )

            research = agent_tool(child, name="research", description="Ask a researcher.")
            call = {"name": "research", "arguments": {"prompt": "capital?"}, "call_id": "c1"}
            parent = AgentLoop(
                session=Session.create(),
                adapter=ScriptedAdapter([reply(tool_calls=[call]), "It is Paris."]),
                provider="p",
                model="parent",
                tools=[research],
                store=store,
            )
            await run(parent, "Where is the government of France?")
            parent_id = parent.id
            await parent.aclose()
            (child_id,) = [h.id for h in await store.list_sessions() if h.id != parent_id]
            return parent_id, child_id

    return asyncio.run(write())


def test_show_and_list_name_a_sub_agent_as_such(dsh: Dsh) -> None:
    parent_id, child_id = _delegate(dsh.cwd / "agents.db")

    shown_parent = dsh.ok("sessions", "show", parent_id, "--store", "agents.db")
    shown_child = dsh.ok("sessions", "show", child_id, "--store", "agents.db")
    listed = dsh.ok("sessions", "list", "--store", "agents.db")

    assert f"sub-agent: session {child_id}" in shown_parent
    assert "branch:" not in shown_parent
    assert f"sub-agent of session {parent_id}" in shown_child
    assert "forked" not in shown_child
    assert "(sub-agent of " in listed and "(fork of " not in listed
