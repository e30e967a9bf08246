"""500 tool-heavy turns through a small context window: compaction keeps every request
inside it, and the log stays the truth (what the model saw, rebuilt from the log)."""

from __future__ import annotations

from pathlib import Path

from dsh_agent import AgentLoop, Compaction, reconstruct_requests
from dsh_agent.compaction import PruneConfig
from dsh_agent.requests import diff_requests
from dsh_llm import create_user_message
from dsh_llm.testing import FunctionAdapter
from dsh_session import CompletedReason, Session, TurnEndEvent
from dsh_session.stores import SqliteSessionStore

from .support import (
    ToolHeavyModel,
    check_pairs,
    check_prunes,
    check_summaries,
    compaction_events,
    read,
)

WINDOW = 4000
TURNS = 500


async def test_five_hundred_tool_turns_stay_inside_a_small_window(tmp_path: Path) -> None:
    model = ToolHeavyModel(window=WINDOW)
    session = Session.create()
    agent = AgentLoop(
        session=session,
        adapter=FunctionAdapter(model),
        provider="fake",
        model="fake-1",
        system="You are a test agent that reads records.",
        tools=[read],
        context_window=WINDOW,
        compaction=Compaction(
            threshold_ratio=0.8,
            retain_ratio=0.16,
            prune=PruneConfig(threshold_chars=2000, head_chars=600, tail_chars=200),
        ),
    )
    for n in range(1, TURNS + 1):
        agent.followup(create_user_message(content=f"task {n}", source={"kind": "user"}))
        await agent.when_idle()
    await agent.aclose()
    events = session.events

    ends = [event for event in events if isinstance(event, TurnEndEvent)]
    assert len(ends) == TURNS
    assert all(isinstance(end.data.reason, CompletedReason) for end in ends)
    # No request ever exceeded the window (the provider would have refused it).
    assert model.refused == 0
    assert model.largest <= WINDOW
    # Pruned results keep their ids; summaries are new messages citing what they shadow.
    assert check_prunes(events) >= TURNS // 10
    summaries = check_summaries(events)
    assert summaries >= 20
    assert len(model.summaries) == summaries
    # Every request the model received is the one the log explains, in order.
    rebuilt = reconstruct_requests(events)
    assert len(rebuilt) == len(model.conversation) == 2 * TURNS
    for live, again in zip(model.conversation, rebuilt, strict=True):
        assert diff_requests(live, again) == []
        check_pairs(again.messages)
    for request in model.summaries:  # a summary request replays a whole-unit prefix
        check_pairs(request.messages[:-1])
    # The log goes to SQLite and loads back, validated, with every compaction event.
    async with SqliteSessionStore(tmp_path / "sessions.db") as store:
        store.attach(session)
        await store.flush(session)
    async with SqliteSessionStore(tmp_path / "sessions.db") as reopened:
        loaded = await reopened.load(session.id)
        assert list(loaded.events)[: len(events)] == list(events)  # then its end-seed
        assert compaction_events(loaded.events) == compaction_events(events)
        assert list(loaded.derive_messages()) == list(session.derive_messages())
