"""Compaction under a streaming consumer: the rewrites are surface maintenance, so the
update stream shows each message once (a pruned result or a checkpoint is no new
message), and tracing does not count a checkpoint as turn input."""

from __future__ import annotations

from dsh_agent import AgentLoop, Compaction, ToolResultCommitted, UserMessageEntered
from dsh_agent.compaction import PruneConfig
from dsh_llm import create_user_message
from dsh_llm.testing import FunctionAdapter
from dsh_session import Session

from .support import ToolHeavyModel, check_prunes, check_summaries, read

WINDOW = 2000


async def test_a_streamed_run_shows_each_message_once_while_compacting() -> None:
    session = Session.create()
    agent = AgentLoop(
        session=session,
        adapter=FunctionAdapter(ToolHeavyModel(window=WINDOW)),
        provider="fake",
        model="fake-1",
        tools=[read],
        context_window=WINDOW,
        compaction=Compaction(
            prune=PruneConfig(threshold_chars=2000, head_chars=600, tail_chars=200)
        ),
    )
    shown = []
    for n in range(1, 16):
        message = create_user_message(content=f"task {n}", source={"kind": "user"})
        async for update in agent.stream(message):
            if isinstance(update, UserMessageEntered | ToolResultCommitted):
                shown.append(update.message.id)
    await agent.aclose()
    assert check_prunes(session.events) > 0 and check_summaries(session.events) > 0
    assert len(shown) == len(set(shown)) == 30  # 15 prompts and 15 results, once each
