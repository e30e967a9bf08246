"""The verbs without a message of their own, through the mailbox: cancel, inject,
retry, regenerate and edit reach the owner in arrival order and are answered once."""

from __future__ import annotations

import asyncio

from dsh_agent import Worker, connect
from dsh_llm import create_user_message
from dsh_session import Session
from dsh_session.events import TurnEndEvent, UserMessageEvent
from dsh_session.stores import MemorySessionStore, SessionStore

from . import agents
from .test_in_process import new_session


def ends(session: Session) -> list[str]:
    return [e.data.reason.kind for e in session.events if isinstance(e, TurnEndEvent)]


async def answers(store: SessionStore, sid: str) -> list[tuple[str, str, str]]:
    async with connect(store, sid) as agent:
        return [
            (e.entry.kind, e.answer.outcome, e.answer.detail)
            for e in await agent.mailbox.entries(agent.id)
            if e.answer is not None
        ]


async def test_cancel_aborts_the_running_turn_and_inject_waits() -> None:
    store = MemorySessionStore()
    sid = await new_session(store)
    async with (
        Worker(store, agents.pausing, idle_release=0.3, scan_interval=0.02),
        connect(store, sid) as agent,
    ):
        await agent.followup(create_user_message("pause now"))
        while (await store.read(sid))[0].open_turn is None and not ends((await store.read(sid))[0]):
            await asyncio.sleep(0.02)
        await agent.cancel()
        await asyncio.wait_for(agent.wait_idle(), 20)
        injected = create_user_message("context for later")
        await agent.inject(injected)
        await asyncio.wait_for(agent.wait_idle(), 20)
    session, _ = await store.read(sid)
    assert ends(session) == ["aborted"]
    assert injected.id not in {e.data.id for e in session.events if isinstance(e, UserMessageEvent)}
    kinds = await answers(store, sid)
    assert [k[:2] for k in kinds] == [("followup", "applied"), ("cancel", "applied"),
                                      ("inject", "applied")]  # fmt: skip


async def test_retry_regenerate_and_edit_are_answered() -> None:
    store = MemorySessionStore()
    sid = await new_session(store)
    prompt = create_user_message("first")
    async with (
        Worker(store, agents.echo, idle_release=0.3, scan_interval=0.02),
        connect(store, sid) as agent,
    ):
        await agent.followup(prompt)
        await agent.retry()  # the last turn completed: nothing to retry
        await agent.regenerate()
        await agent.edit(prompt.id, "first, edited")
        await asyncio.wait_for(agent.wait_idle(), 20)
        await asyncio.sleep(0.1)
    got = await answers(store, sid)
    assert [g[:2] for g in got] == [
        ("followup", "applied"),
        ("retry", "refused"),
        ("regenerate", "applied"),
        ("edit", "applied"),
    ]
    assert "NothingToRetryError" in got[1][2]
    fork_id = got[3][2].removeprefix("fork ")
    fork, _ = await store.read(fork_id)
    texts = [e.data.content[0].text for e in fork.events if isinstance(e, UserMessageEvent)]  # type: ignore[union-attr]
    assert texts == ["first, edited"]
    session, _ = await store.read(sid)
    assert ends(session) == ["completed", "completed"]  # the turn and its regeneration
