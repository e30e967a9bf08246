"""connect, the drain and Worker in one process, on every backend: deliveries reach the
log once, in order; the typed errors write nothing; updates resume from any seq."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dsh_agent import (
    AssistantCommitted,
    DeliveryError,
    DeliveryRefused,
    RemoteAgent,
    TurnEnded,
    UserMessageEntered,
    Worker,
    connect,
    reconstruct_requests,
)
from dsh_llm import create_user_message, replace_content
from dsh_session import Session, undecided_call_ids
from dsh_session._header import SessionId
from dsh_session._mailbox._records import StoredEntry
from dsh_session.errors import DeliveryConflictError
from dsh_session.events import UserMessageEvent
from dsh_session.stores import JsonlSessionStore, SessionStore

from . import agents
from .conftest import StoreFactory


async def new_session(store: SessionStore) -> str:
    session = Session.create()
    store.attach(session)
    await store.flush(session)
    store.detach(session)
    return session.id


def user_ids(session: Session) -> list[str]:
    return [e.data.id for e in session.events if isinstance(e, UserMessageEvent)]


async def test_followups_reach_the_log_once_in_order(open_store: StoreFactory) -> None:
    store = open_store()
    sid = await new_session(store)
    messages = [create_user_message(f"m{i}") for i in range(3)]
    async with connect(store, sid) as agent:
        receipts = [await agent.followup(m) for m in messages]
        assert [await agent.followup(messages[0]) for _ in range(2)] == [receipts[0]] * 2
        async with Worker(store, agents.echo, idle_release=0.2, scan_interval=0.05):
            await asyncio.wait_for(agent.wait_idle(), 20)
        assert await agent.followup(messages[1]) == receipts[1]  # after it was applied
    session, _ = await store.read(sid)
    assert user_ids(session) == [m.id for m in messages]
    reconstruct_requests(session.events)
    answers = [
        e.data.message.content[0].text  # type: ignore[union-attr]
        for e in session.events
        if e.type == "assistant/message"
    ]
    assert answers == ["echo: m0", "echo: m1", "echo: m2"]


async def test_refusals_write_nothing(open_store: StoreFactory) -> None:
    store = open_store()
    sid = await new_session(store)
    message = create_user_message("hello")
    async with connect(store, "no-such-session") as unknown:
        with pytest.raises(DeliveryError) as refused:
            await unknown.followup(message)
        assert refused.value.session_id == "no-such-session"
    async with connect(store, sid) as agent:
        with pytest.raises(DeliveryError):
            await agent.followup({"role": "user"})  # type: ignore[arg-type]
        with pytest.raises(DeliveryError):
            await agent.followup(message, policy="later")  # type: ignore[arg-type]
        await agent.followup(message)
        changed = replace_content(message, "something else")
        with pytest.raises(DeliveryConflictError) as conflict:
            await agent.followup(changed)
        assert "hello" in str(conflict.value)
        assert len(await agent.mailbox.entries(agent.id)) == 1


async def test_updates_resume_from_any_seq_and_show_refusals(open_store: StoreFactory) -> None:
    store = open_store()
    sid = await new_session(store)
    async with connect(store, sid) as agent:
        await agent.followup(create_user_message("one"))
        await agent.approve("call-that-does-not-wait")
        async with Worker(store, agents.echo, idle_release=0.2, scan_interval=0.05):
            await asyncio.wait_for(agent.wait_idle(), 20)
        await asyncio.wait_for(updates_then_resume(agent), 20)


async def updates_then_resume(agent: RemoteAgent) -> None:
    """What the updates test reads: everything, then again from after the prompt."""
    seen: list[object] = []
    async for update in agent.updates(poll_interval=0.02):
        seen.append(update)
        if {TurnEnded, DeliveryRefused} <= {type(u) for u in seen}:
            break
    kinds = [type(u).__name__ for u in seen if not isinstance(u, DeliveryRefused)]
    assert kinds[:1] == ["TurnStarted"] and "AssistantCommitted" in kinds
    [refusal] = [u for u in seen if isinstance(u, DeliveryRefused)]
    assert refusal.kind == "approve" and "call-that-does-not-wait" in refusal.detail
    entered = next(u for u in seen if isinstance(u, UserMessageEntered))
    async for update in agent.updates(from_seq=entered.seq + 1, poll_interval=0.02):
        if isinstance(update, DeliveryRefused):
            continue
        assert not isinstance(update, UserMessageEntered)
        if isinstance(update, AssistantCommitted):
            break


async def test_updates_read_the_mailbox_from_its_oldest_unanswered_entry(
    open_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer never changes, so an updates stream reads the answered history once
    and then only what is new: a refusal that comes later is still reported, once."""
    store = open_store()
    sid = await new_session(store)
    async with connect(store, sid) as agent:
        for text in ("one", "two", "three"):
            await agent.followup(create_user_message(text))
        async with Worker(store, agents.echo, idle_release=0.2, scan_interval=0.05):
            await asyncio.wait_for(agent.wait_idle(), 20)
        starts: list[int] = []
        entries = agent.mailbox.entries

        async def recorded(session_id: SessionId, *, from_arrival: int = 0) -> list[StoredEntry]:
            starts.append(from_arrival)
            return await entries(session_id, from_arrival=from_arrival)

        monkeypatch.setattr(agent.mailbox, "entries", recorded)

        async def first_refusal() -> DeliveryRefused:
            async for update in agent.updates(poll_interval=0.02):
                if isinstance(update, DeliveryRefused):
                    return update
            raise AssertionError("the stream ended")

        refusal = asyncio.create_task(first_refusal())
        await asyncio.sleep(0.3)
        await agent.approve("call-that-does-not-wait")
        async with Worker(store, agents.echo, idle_release=0.2, scan_interval=0.05):
            await asyncio.wait_for(agent.wait_idle(), 20)
        assert (await asyncio.wait_for(refusal, 20)).kind == "approve"
    assert starts[0] == 0 and len(starts) > 3
    assert 3 in starts and set(starts[1:]) <= {3, 4}  # the refused approval arrived fourth


async def test_approvals_decided_once(open_store: StoreFactory) -> None:
    store = open_store()
    sid = await new_session(store)
    async with connect(store, sid) as first, connect(store, sid) as second:
        await first.followup(create_user_message("look it up"))
        async with Worker(store, agents.asks_approval, idle_release=0.2, scan_interval=0.05):
            await asyncio.wait_for(first.wait_idle(), 20)
            session, _ = await store.read(sid)
            [call] = undecided_call_ids(session.events)
            receipts = await asyncio.gather(first.approve(call), second.approve(call))
            assert receipts[0] == receipts[1]
            with pytest.raises(DeliveryConflictError):
                await second.deny(call, "too late")
            await asyncio.wait_for(first.wait_idle(), 20)
    session, _ = await store.read(sid)
    decided = [e for e in session.events if e.type == "approval/decided"]
    assert len(decided) == 1
    assert [e.type for e in session.events].count("tool/result") == 1
    reconstruct_requests(session.events)


async def test_deleted_and_corrupt_sessions_are_refused(tmp_path: Path) -> None:
    async with JsonlSessionStore(tmp_path / "s") as store:
        gone, damaged = await new_session(store), await new_session(store)
        async with connect(store, gone) as agent:
            await agent.followup(create_user_message("before"))
        await store.delete(gone)
        async with connect(store, gone) as agent:
            with pytest.raises(DeliveryError, match="never created, or deleted") as refused:
                await agent.followup(create_user_message("after"))
            assert refused.value.session_id == gone
        log = store.path_of(damaged)  # type: ignore[arg-type]
        data = bytearray(log.read_bytes())
        data[len(data) // 2 : len(data) // 2 + 8] = b"\xff" * 8
        log.write_bytes(bytes(data))
        async with connect(store, damaged) as agent:
            with pytest.raises(DeliveryError, match="cannot be read") as refused:
                await agent.followup(create_user_message("hello"))
            assert refused.value.session_id == damaged
            assert await agent.mailbox.entries(agent.id) == []
