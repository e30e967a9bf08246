"""recall: the model reads again, from its own log, what a compaction summarized."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from dsh_agent import AgentLoop, Compaction, MessageNotFoundError, ToolContext, recall_tool
from dsh_agent.compaction import INSTRUCTION, SHADOWED_IDS_FIELD
from dsh_llm import CallId, GenerateRequest, TextBlock, ToolResultMessage, create_user_message
from dsh_llm.testing import FunctionAdapter, Reply
from dsh_session import (
    CompactionSummaryEvent,
    Replace,
    Session,
    SqliteSessionStore,
    UserMessageEvent,
)
from dsh_session.stores import SessionStore

WINDOW = 500  # the fourth question's pre-step summarizes the first ones
TS_DB = Path(__file__).resolve().parents[1] / "fixtures" / "ts-logs" / "sqlite" / "ts.db"


def model(request: GenerateRequest) -> str | Reply:
    last = request.messages[-1]
    if last.content == (TextBlock(text=INSTRUCTION),):
        return "ok"  # the summary: shorter than anything it replaces
    if isinstance(last, ToolResultMessage):
        return "thanks"
    text = str(last.content[0].text)  # type: ignore[union-attr]
    if text.startswith("what was the first"):
        return Reply(tool_calls=({"name": "recall", "arguments": {"query": "zebra"}},))
    return "answer " * 40


def replaced_ids(session: Session, checkpoint: UserMessageEvent) -> list[str]:
    """The ids of the messages at the seqs the checkpoint's compaction/summary shadows."""
    summary = session.events[checkpoint.seq - 1]
    assert isinstance(summary, CompactionSummaryEvent)
    ids = []
    for seq in summary.data.shadowed_seqs:
        event = session.events[seq]
        message = event.data if isinstance(event, UserMessageEvent) else event.data.message  # type: ignore[union-attr]
        ids.append(message.id)
    return ids


def checkpoints(session: Session) -> list[UserMessageEvent]:
    return [
        e
        for e in session.events
        if isinstance(e, UserMessageEvent) and isinstance(e.surface_op, Replace)
    ]


async def compacted(store: SessionStore) -> tuple[AgentLoop, Session]:
    session = Session.create()
    agent = AgentLoop(
        session=session,
        adapter=FunctionAdapter(model),
        provider="test",
        model="test-model",
        context_window=WINDOW,
        compaction=Compaction(),
        store=store,
        tools=[recall_tool(store)],
    )
    prompts = ["the zebra question " * 10] + [f"question {n} " * 20 for n in range(2, 5)]
    for prompt in prompts:
        agent.followup(create_user_message(content=prompt, source={"kind": "user"}))
        await agent.when_idle()
    assert checkpoints(session), "the scenario must compact"
    return agent, session


async def test_the_model_recalls_a_summarized_prompt_by_search(tmp_path: Path) -> None:
    async with SqliteSessionStore(tmp_path / "agent.db") as store:
        agent, session = await compacted(store)
        first = session.derive_messages()[0]
        assert "zebra" not in str(first.content)  # summarized away
        agent.followup(create_user_message(content="what was the first?", source={"kind": "user"}))
        await agent.when_idle()
        await agent.aclose()
    original = next(m for m in session.events if isinstance(m, UserMessageEvent))
    result = [m for m in session.derive_messages() if isinstance(m, ToolResultMessage)][-1]
    text = str(result.content[0].content[0].text)  # type: ignore[union-attr]
    assert not result.content[0].is_error
    assert f"[message {original.data.id} · user · seq {original.seq}]" in text
    assert "the zebra question the zebra question" in text


async def test_a_checkpoint_names_what_it_replaced_and_each_is_recalled_by_id(
    tmp_path: Path,
) -> None:
    async with SqliteSessionStore(tmp_path / "agent.db") as store:
        agent, session = await compacted(store)
        await agent.aclose()
        checkpoint = checkpoints(session)[0]
        covered = checkpoint.data.source.model_dump(by_alias=True)[SHADOWED_IDS_FIELD]
        assert list(covered) == replaced_ids(session, checkpoint) and covered
        said = await call(store, session.id, {"ids": [checkpoint.data.id, *covered]})
    assert f"(a checkpoint summary of messages: {', '.join(covered)})" in said
    for message_id in covered:
        assert f"[message {message_id} · " in said


async def test_an_id_the_log_does_not_hold_is_refused_by_name(tmp_path: Path) -> None:
    async with SqliteSessionStore(tmp_path / "agent.db") as store:
        agent, session = await compacted(store)
        await agent.aclose()
        with pytest.raises(MessageNotFoundError, match="no-such-message") as refused:
            await call(store, session.id, {"ids": ["no-such-message"]})
    assert refused.value.session_id == session.id


async def test_a_checkpoint_the_harness_wrote_is_resolved_by_seq(tmp_path: Path) -> None:
    database = tmp_path / "ts.db"
    shutil.copy(TS_DB, database)
    async with SqliteSessionStore(database, mode="read") as store:
        [header] = [h for h in await store.list_sessions() if "compaction" in h.id]
        session, _ = await store.read(header.id)
        [checkpoint] = checkpoints(session)
        assert SHADOWED_IDS_FIELD not in checkpoint.data.source.model_dump(by_alias=True)
        said = await call(store, header.id, {"ids": [checkpoint.data.id]})
    covered = ", ".join(replaced_ids(session, checkpoint))
    assert said.splitlines()[1] == f"(a checkpoint summary of messages: {covered})"


async def call(store: SessionStore, session_id: str, arguments: dict[str, Any]) -> str:
    """Run the tool as the loop does, for the session ``session_id``."""
    context = ToolContext(
        call_id=CallId("c1"), turn=1, step=1, cancelled=asyncio.Event(), session_id=session_id
    )
    output = await recall_tool(store).invoke(arguments, context)
    return str(output.content[0].text)  # type: ignore[union-attr]
