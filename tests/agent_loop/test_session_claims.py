"""One agent loop per Session object: a second one is refused until the first is closed
(``aclose()``, ``async with``) or garbage-collected."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dsh_agent import Agent, AgentClosedError, AgentLoop, SessionInUseError
from dsh_llm.testing import ScriptedAdapter
from dsh_session import Session, TurnEndEvent
from dsh_session.stores import SqliteSessionStore

from .adapters import HangingAdapter
from .support import fixed


def loop_over(session: Session, *answers: str, **options: object) -> AgentLoop:
    return AgentLoop(
        session=session,
        adapter=ScriptedAdapter(list(answers)),
        provider="p",
        model="m",
        **options,  # type: ignore[arg-type]
    )


def assert_refused(session: Session) -> None:
    written = session.seq
    with pytest.raises(SessionInUseError) as refused:
        loop_over(session)
    assert refused.value.session_id == session.id
    assert session.id in str(refused.value)
    assert session.seq == written  # the refused loop wrote nothing


async def test_a_second_loop_on_a_session_is_refused_and_the_first_goes_on(
    session: Session,
) -> None:
    first = loop_over(session, "one", "two")
    first.followup(fixed("m1", "hi"))
    assert_refused(session)  # while a turn is running
    await first.when_idle()
    assert_refused(session)  # and while idle
    first.followup(fixed("m2", "again"))
    await first.when_idle()
    assert first.status == "idle"
    ends = [e.data.reason.kind for e in session.events if isinstance(e, TurnEndEvent)]
    assert ends == ["completed", "completed"]


async def test_a_closed_loop_gives_the_session_and_its_pending_input_back(
    session: Session,
) -> None:
    first = loop_over(session)
    first.inbox.append("next-turn", fixed("p1", "for later"))
    assert_refused(session)
    await first.aclose()
    with pytest.raises(AgentClosedError) as closed:
        first.followup(fixed("m1", "too late"))
    assert closed.value.session_id == session.id
    with pytest.raises(AgentClosedError):
        first.inbox.append("next-step", fixed("m2", "too late"))
    with pytest.raises(AgentClosedError):
        first.cancel()
    second = loop_over(session, "done")
    assert [m.id for m in second.inbox.next_turn] == ["p1"]


async def test_closing_aborts_a_running_turn_as_disposed(session: Session) -> None:
    adapter = HangingAdapter()
    first = AgentLoop(session=session, adapter=adapter, provider="p", model="m")
    first.followup(fixed("m1", "hi"))
    first.followup(fixed("m2", "queued"))
    await adapter.streaming.wait()
    await first.aclose()
    assert first.status == "idle" and adapter.closed
    (end,) = [e.data.reason for e in session.events if isinstance(e, TurnEndEvent)]
    assert end.kind == "aborted" and end.reason.kind == "disposed"
    second = loop_over(session, "resumed")
    assert [m.id for m in second.inbox.next_turn] == ["m2"]  # still pending


async def test_leaving_async_with_releases_the_session(session: Session) -> None:
    async with loop_over(session, "ok") as first:
        first.followup(fixed("m1", "hi"))
        await first.when_idle()
        assert_refused(session)
    assert first.closed
    loop_over(session)


async def test_an_unreachable_loop_releases_the_session(session: Session) -> None:
    first = loop_over(session, "ok")
    first.followup(fixed("m1", "hi"))
    await first.when_idle()
    assert_refused(session)
    del first  # no close: the next claim collects it
    second = loop_over(session)
    assert second.session is session


async def test_closing_makes_the_log_durable(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with SqliteSessionStore(path) as store:
        first = loop_over(Session.create(), store=store)
        first.inject(fixed("s1", "context"))  # no wake: no checkpoint flushes it
        await first.aclose()
        session_id = first.id
        async with SqliteSessionStore(path) as reader:
            stored, _ = await reader.read(session_id)
    assert [e.type for e in stored.events][-1] == "agent/inbox/spliced"


async def test_aclose_inside_the_loops_own_turn_is_refused(session: Session) -> None:
    closing: list[BaseException] = []

    async def hook(step: object, call_next: object) -> object:
        try:
            await agent.aclose()
        except Exception as error:
            closing.append(error)
        return await call_next()  # type: ignore[operator]

    agent = loop_over(session, "ok")
    agent.on_pre_step(hook)  # type: ignore[arg-type]
    agent.followup(fixed("m1", "hi"))
    await asyncio.wait_for(agent.when_idle(), 5)
    assert closing and "its own turn" in str(closing[0])


async def close_any(agent: Agent) -> bool:
    """Code written against the Agent protocol only (mypy checks it has aclose)."""
    await agent.aclose()
    return agent.closed


async def test_an_agent_is_closed_through_the_protocol(session: Session) -> None:
    agent = loop_over(session, "one")
    agent.followup(fixed("m1", "hi"))
    assert await close_any(agent) is True
    assert loop_over(session).session is session  # the session was given back
    ends = [e.data.reason.kind for e in session.events if isinstance(e, TurnEndEvent)]
    assert ends == ["aborted"]
