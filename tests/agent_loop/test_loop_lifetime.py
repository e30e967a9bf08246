"""No reference cycle through an agent loop: an idle loop its program drops is freed
at once (and its session with it), while a running loop is kept alive by its turn."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator, Iterator

import pytest

from dsh_agent import AgentLoop, SessionInUseError, tool
from dsh_agent._agent import PreStep
from dsh_llm import FinishChunk, GenerateRequest, StopFinish, StreamChunk, TextDeltaChunk
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, TurnEndEvent

from .adapters import until
from .support import fixed


@pytest.fixture
def no_collector() -> Iterator[None]:
    """Only reference counting frees objects while a test runs."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@tool
async def echo(text: str) -> str:
    """Echo the text."""
    return text


@pytest.mark.usefixtures("no_collector")
@pytest.mark.parametrize("with_tool", [False, True])
async def test_a_dropped_idle_loop_and_its_session_are_freed_without_the_collector(
    with_tool: bool,
) -> None:
    session = Session.create()
    call = reply(tool_calls=[{"call_id": "c1", "name": "echo", "arguments": '{"text":"x"}'}])
    agent = AgentLoop(
        session=session,
        adapter=ScriptedAdapter([call, "done"] if with_tool else ["done"]),
        provider="p",
        model="m",
        tools=[echo] if with_tool else [],
    )
    seen: list[PreStep] = []

    async def keep(step: PreStep, call_next: object) -> object:
        seen.append(step)
        return await call_next()  # type: ignore[operator]

    agent.on_pre_step(keep)  # type: ignore[arg-type]
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()
    assert seen and all(step.agent is agent for step in seen)
    ends = [e.data.reason.kind for e in session.events if isinstance(e, TurnEndEvent)]
    assert ends == ["completed"]
    seen.clear()
    observer = Observer()  # held by the session only: freed with it
    session.subscribe(observer)
    dropped_agent, dropped_session = weakref.ref(agent), weakref.ref(observer)
    del agent, session, observer
    assert dropped_agent() is None
    assert dropped_session() is None


class Observer:
    def __call__(self, event: object) -> None:
        pass


class ParkedAdapter:
    """Streams a text delta, then waits for ``release`` (an event the test holds, as
    a real adapter's socket is held by the event loop) and finishes."""

    def __init__(self) -> None:
        self.streaming = asyncio.Event()
        self.release = asyncio.Event()

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        yield TextDeltaChunk(index=0, text="answer")
        self.streaming.set()
        await self.release.wait()
        yield FinishChunk(reason=StopFinish())


@pytest.mark.usefixtures("no_collector")
async def test_a_running_loop_dropped_by_its_program_keeps_its_session_until_idle() -> None:
    session = Session.create()
    adapter = ParkedAdapter()
    agent = AgentLoop(session=session, adapter=adapter, provider="p", model="m")
    agent.followup(fixed("m1", "hi"))
    await adapter.streaming.wait()
    dropped = weakref.ref(agent)
    del agent
    with pytest.raises(SessionInUseError):  # its turn holds it (the collector ran)
        AgentLoop(session=session, adapter=adapter, provider="p", model="m")
    assert dropped() is not None
    adapter.release.set()
    await until(lambda: dropped() is None)  # idle: freed at once, without the collector
    ends = [e.data.reason.kind for e in session.events if isinstance(e, TurnEndEvent)]
    assert ends == ["completed"]
    assert AgentLoop(session=session, adapter=adapter, provider="p", model="m").session is session


async def test_an_idle_loop_kept_by_its_program_stays_usable() -> None:
    session = Session.create()
    agent = AgentLoop(
        session=session, adapter=ScriptedAdapter(["one", "two"]), provider="p", model="m"
    )
    agent.followup(fixed("m1", "hi"))
    await agent.when_idle()
    gc.collect()
    agent.followup(fixed("m2", "again"))
    await asyncio.wait_for(agent.when_idle(), 5)
    ends = [e.data.reason.kind for e in session.events if isinstance(e, TurnEndEvent)]
    assert ends == ["completed", "completed"]
