"""SyncAgent has the Agent protocol's branching and approval verbs: regenerate, edit
(returning the branch as a SyncAgent on the same loop), approve and deny, over a real
SQLite file whose log is read back after the chats are closed."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from dsh_agent import AgentLoop, tool
from dsh_agent.errors import AgentError
from dsh_agent.streaming import AssistantCommitted, TextDelta, TurnEnded, TurnStarted
from dsh_agent.streaming._sync import SyncAgent
from dsh_llm import AssistantMessage, CallId, TextBlock, UserMessage, create_user_message
from dsh_llm._messages import ToolResultMessage
from dsh_llm.testing import Response, ScriptedAdapter, reply
from dsh_session import Session
from dsh_session.stores import SqliteSessionStore


def ask(text: str) -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def texts(session: Session) -> list[str]:
    """The text of each user and assistant message of the derived history."""
    return [
        "".join(b.text for b in m.content if isinstance(b, TextBlock))
        for m in session.derive_messages()
        if not isinstance(m, ToolResultMessage)
    ]


@tool(requires_approval=True)
async def delete(path: str) -> str:
    """Delete a path."""
    return f"deleted {path}"


def texts_of(message: AssistantMessage) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


class Over:
    """Agents over one SQLite file, built on the sync agent's private loop."""

    def __init__(self, where: Path, responses: list[Response]) -> None:
        self.path = where / "chat.db"
        self.adapter = ScriptedAdapter(responses)
        self.store: SqliteSessionStore | None = None

    def __call__(self) -> AgentLoop:
        self.store = SqliteSessionStore(self.path)
        return AgentLoop(
            session=Session.create(),
            adapter=self.adapter,
            provider="test",
            model="scripted",
            store=self.store,
            tools=[delete],
            check_requests=True,
        )

    def stored(self, session_id: str) -> Session:
        """The session as a new store loads it from the file, once the chat is closed."""
        assert self.store is not None
        asyncio.run(self.store.close())

        async def load() -> Session:
            async with SqliteSessionStore(self.path) as again:
                return await again.load(session_id)

        return asyncio.run(load())


def test_regenerate_answers_the_last_prompt_again(tmp_path: Path) -> None:
    over = Over(tmp_path, ["first answer", "second answer"])
    with SyncAgent(over) as chat:
        chat.run(ask("hi"))
        again = chat.regenerate()
        session_id = chat.agent.id
    assert again.final_response == "second answer" and again.finish_reason == "completed"
    assert texts(over.stored(session_id)) == ["hi", "second answer"]


def test_edit_returns_the_branch_as_a_sync_agent_on_the_same_loop(tmp_path: Path) -> None:
    over = Over(tmp_path, ["about cats", "about dogs", "more dogs"])
    threads = set(threading.enumerate())
    with SyncAgent(over) as chat:
        original = ask("tell me about cats")
        chat.run(original)
        branch = chat.edit(original.id, "tell me about dogs")
        with branch:
            assert branch.agent.session.id != chat.agent.id
            assert branch.run(ask("more")).final_response == "more dogs"
            branch_id = branch.agent.id
        original_id = chat.agent.id
    assert set(threading.enumerate()) == threads  # the last close joined the loop
    assert texts(over.stored(branch_id))[1:] == ["about dogs", "more", "more dogs"]
    assert texts(over.stored(original_id)) == ["tell me about cats", "about cats"]


def test_approve_and_deny_drive_the_waiting_turn_on(tmp_path: Path) -> None:
    calls = [{"call_id": "a", "name": "delete", "arguments": {"path": "/a"}}]
    deny_next = [{"call_id": "b", "name": "delete", "arguments": {"path": "/b"}}]
    over = Over(
        tmp_path,
        [reply(tool_calls=calls), "deleted a", reply(tool_calls=deny_next), "kept b"],
    )
    with SyncAgent(over) as chat:
        waiting = chat.run(ask("delete /a"))
        assert waiting.finish_reason is None
        assert [p.call_id for p in chat.pending_approvals] == ["a"]
        approved = chat.approve(CallId("a"))
        assert (approved.final_response, approved.finish_reason) == ("deleted a", "completed")

        chat.run(ask("delete /b"))
        denied = chat.deny(CallId("b"), "keep it")
        assert denied.final_response == "kept b" and chat.pending_approvals == ()
        session_id = chat.agent.id
    stored = over.stored(session_id)
    results = [m for m in stored.derive_messages() if isinstance(m, ToolResultMessage)]
    assert [r.content[0].is_error for r in results] == [False, True]
    assert texts(stored)[-1] == "kept b"


def test_updates_streams_what_a_verb_runs_read_after_or_beside_it(tmp_path: Path) -> None:
    over = Over(tmp_path, ["first answer", "second answer", "third answer"])
    with SyncAgent(over) as chat:
        chat.run(ask("hi"))
        after = chat.updates(until_idle=True)  # subscribed now: the verb comes next
        chat.regenerate()
        read_after = list(after)

        beside: list[object] = []
        live = chat.updates(until_idle=True)
        reader = threading.Thread(target=lambda: beside.extend(live))
        reader.start()
        chat.regenerate()
        reader.join(timeout=30)

    for updates, answer in ((read_after, "second answer"), (beside, "third answer")):
        committed = [u for u in updates if isinstance(u, AssistantCommitted)]
        assert [texts_of(u.message) for u in committed] == [answer]
        turn = [
            type(u) for u in updates if isinstance(u, TurnStarted | AssistantCommitted | TurnEnded)
        ]
        assert turn == [TurnStarted, AssistantCommitted, TurnEnded]
        deltas = "".join(u.text for u in updates if isinstance(u, TextDelta))
        assert deltas == answer  # the model's text as it streamed, under the same id
        assert {u.message_id for u in updates if isinstance(u, TextDelta)} == {
            committed[0].message_id
        }
    assert not reader.is_alive()


def test_updates_of_a_closed_chat_are_refused(tmp_path: Path) -> None:
    chat = SyncAgent(Over(tmp_path, []))
    chat.close()
    with pytest.raises(AgentError, match="closed"):
        chat.updates()
