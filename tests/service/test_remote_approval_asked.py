"""A remote reader sees a call waiting for approval (``ApprovalAsked`` from the log's
``approval/asked``), so a client of another process knows which call to decide."""

from __future__ import annotations

import asyncio

from dsh_agent import ApprovalAsked, ToolResultCommitted, Worker, connect
from dsh_llm import create_user_message
from dsh_session.stores import MemorySessionStore

from . import agents
from .test_in_process import new_session


async def test_a_remote_reader_sees_the_approval_asked_and_decides_it() -> None:
    store = MemorySessionStore()
    sid = await new_session(store)
    async with (
        Worker(store, agents.asks_approval, idle_release=0.3, scan_interval=0.02),
        connect(store, sid) as agent,
    ):
        await agent.followup(create_user_message("look up"))

        async def until_result() -> tuple[ApprovalAsked, ToolResultCommitted]:
            asked: ApprovalAsked | None = None
            async for update in agent.updates(poll_interval=0.02):
                if isinstance(update, ApprovalAsked):
                    asked = update
                    await agent.approve(update.call_id)
                if isinstance(update, ToolResultCommitted):
                    assert asked is not None
                    return asked, update
            raise AssertionError("the updates ended")

        asked, result = await asyncio.wait_for(until_result(), 20)
    assert (asked.tool_name, asked.arguments) == ("lookup", '{"key": "k"}')
    assert result.call_id == asked.call_id
