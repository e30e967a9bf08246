"""A parent process SIGKILLed mid-delegation (issue 32 #1): both sessions are durable
on the store; loading the parent reports the delegating call as of unknown outcome
(crash repair's ``TOOL_OUTCOME_UNKNOWN``: the child may have had effects), loading
the child closes its turn ``interrupted``, and the child still names its parent and
the call. A new parent loop goes on from there
(docs/decisions/2026-12-06-sub-agents.md)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from dsh_agent import AgentLoop, run
from dsh_agent._delegation import delegation_depth
from dsh_llm import UserMessage
from dsh_llm.testing import ScriptedAdapter
from dsh_session import InterruptedReason, TurnEndEvent, tool_failure_codes
from dsh_session.events import ToolCallEvent, ToolResultEvent
from dsh_session.stores import SqliteSessionStore

SCRIPT = Path(__file__).with_name("crash_parent.py")
ROOT = Path(__file__).parents[2]


async def _kill_mid_delegation(db: Path) -> tuple[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-u", str(SCRIPT), str(db), stdout=asyncio.subprocess.PIPE, env=env
    )
    assert process.stdout is not None
    try:
        parent = (await asyncio.wait_for(process.stdout.readline(), 60)).decode().split()
        child = (await asyncio.wait_for(process.stdout.readline(), 60)).decode().split()
    finally:
        process.send_signal(signal.SIGKILL)
        await process.wait()
    assert parent[0] == "PARENT" and child[0] == "CHILD", (parent, child)
    return parent[1], child[1]


async def test_a_parent_killed_mid_delegation_reports_the_call_unknown(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    parent_id, child_id = await _kill_mid_delegation(db)
    async with SqliteSessionStore(db) as store:
        parent = await store.load(parent_id)
        [call] = [e.data for e in parent.events if isinstance(e, ToolCallEvent)]
        [result] = [e.data for e in parent.events if isinstance(e, ToolResultEvent)]
        assert result.message.content[0].call_id == call.call_id
        assert result.error is not None
        assert result.error.code == tool_failure_codes.TOOL_OUTCOME_UNKNOWN
        [parent_end] = [e for e in parent.events if isinstance(e, TurnEndEvent)]
        assert isinstance(parent_end.data.reason, InterruptedReason)

        child = await store.load(child_id)
        assert child.header.parent_session == parent_id
        assert delegation_depth(child.header) == 1
        [prompt] = [m for m in child.derive_messages() if isinstance(m, UserMessage)]
        assert prompt.source.model_dump(by_alias=True)["parentCallId"] == call.call_id
        [child_end] = [e for e in child.events if isinstance(e, TurnEndEvent)]
        assert isinstance(child_end.data.reason, InterruptedReason)

        again = AgentLoop(
            session=parent,
            adapter=ScriptedAdapter(["The research was cut off; asking again later."]),
            provider="p",
            model="m",
            store=store,
        )
        result_after = await run(again, "what happened?")
        assert result_after.final_response is not None
        await again.aclose()
