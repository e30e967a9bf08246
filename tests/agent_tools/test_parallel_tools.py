"""Concurrency-safe tools: adjacent safe calls run together, results in model order,
the log's ``tool/call``/``tool/result`` order as the TypeScript harness writes it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field

from dsh_agent import AgentLoop, Tool, ToolContext, run, tool
from dsh_llm import TextBlock, UserMessage, create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


def ask(text: str) -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def calls_to(*names: str) -> object:
    return reply(tool_calls=[{"call_id": f"c{i}", "name": name} for i, name in enumerate(names, 1)])


def make_agent(tools: Iterable[Tool], *names: str) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([calls_to(*names), "done"]),  # type: ignore[list-item]
        provider="test",
        model="test-model",
        tools=tools,
        check_requests=True,
    )


def tool_timeline(session: Session) -> list[tuple[str, str]]:
    timeline: list[tuple[str, str]] = []
    for event in session.events:
        if event.type == "tool/call":
            timeline.append(("call", event.data.call_id))
        elif event.type == "tool/result":
            result = event.data.message.content[0]
            timeline.append(("result", result.call_id))
    return timeline


def result_texts(session: Session) -> dict[str, str]:
    texts: dict[str, str] = {}
    for event in session.events:
        if event.type == "tool/result":
            block = event.data.message.content[0]
            inner = block.content[0]
            assert isinstance(inner, TextBlock)
            texts[block.call_id] = inner.text
    return texts


@dataclass
class Rendezvous:
    """Each call waits until ``expected`` calls are running at once (or gives up)."""

    expected: int
    running: int = 0
    peak: int = 0
    log: list[str] = field(default_factory=list)
    everyone: asyncio.Event = field(default_factory=asyncio.Event)

    async def meet(self, name: str) -> str:
        self.running += 1
        self.peak = max(self.peak, self.running)
        self.log.append(f"start {name}")
        if self.running >= self.expected:
            self.everyone.set()
        try:
            await asyncio.wait_for(self.everyone.wait(), timeout=5)
            return "together"
        except TimeoutError:
            return "alone"
        finally:
            self.running -= 1
            self.log.append(f"end {name}")


def safe_tool(name: str, meeting: Rendezvous, *, finish_after: float = 0.0) -> Tool:
    @tool(name=name, concurrency_safe=True)
    async def body() -> str:
        """A read-only tool."""
        outcome = await meeting.meet(name)
        await asyncio.sleep(finish_after)
        return outcome

    return body


async def test_adjacent_safe_calls_run_together_and_commit_in_model_order() -> None:
    meeting = Rendezvous(expected=3)
    # c1 finishes last: its result still comes first.
    tools = [
        safe_tool("a", meeting, finish_after=0.03),
        safe_tool("b", meeting, finish_after=0.01),
        safe_tool("c", meeting),
    ]
    agent = make_agent(tools, "a", "b", "c")
    result = await run(agent, ask("go"))

    assert result.final_response == "done"
    assert result_texts(agent.session) == {"c1": "together", "c2": "together", "c3": "together"}
    assert tool_timeline(agent.session) == [
        ("call", "c1"),
        ("call", "c2"),
        ("call", "c3"),
        ("result", "c1"),
        ("result", "c2"),
        ("result", "c3"),
    ]
    await agent.aclose()


async def test_an_exclusive_call_is_a_barrier_between_safe_groups() -> None:
    meeting = Rendezvous(expected=2)
    seen_running: list[int] = []

    @tool
    async def write() -> str:
        """Not concurrency-safe."""
        seen_running.append(meeting.running)
        return "written"

    tools = [safe_tool("a", meeting), safe_tool("b", meeting), write, safe_tool("c", meeting)]
    agent = make_agent(tools, "a", "b", "write", "c")
    await run(agent, ask("go"))

    assert seen_running == [0]  # the safe pair had drained before the write started
    assert tool_timeline(agent.session) == [
        ("call", "c1"),
        ("call", "c2"),
        ("result", "c1"),
        ("result", "c2"),
        ("call", "c3"),
        ("result", "c3"),
        ("call", "c4"),
        ("result", "c4"),
    ]
    texts = result_texts(agent.session)
    assert (texts["c1"], texts["c2"]) == ("together", "together")
    assert meeting.peak == 2
    assert meeting.log[-2:] == ["start c", "end c"]  # c had no adjacent safe neighbour
    await agent.aclose()


async def test_unsafe_calls_run_one_at_a_time() -> None:
    meeting = Rendezvous(expected=2)

    def exclusive(name: str) -> Tool:
        @tool(name=name)
        async def body() -> str:
            """Exclusive."""
            return await asyncio.wait_for(asyncio.shield(meeting.meet(name)), timeout=10)

        return body

    # Each would wait 5 s for the other if run together: shorten by expecting 1.
    meeting.expected = 1
    agent = make_agent([exclusive("a"), exclusive("b")], "a", "b")
    await run(agent, ask("go"))
    assert meeting.peak == 1
    assert meeting.log == ["start a", "end a", "start b", "end b"]
    await agent.aclose()


async def test_cancel_drains_started_safe_calls_and_aborts_the_rest() -> None:
    started = asyncio.Event()
    both = asyncio.Event()
    count = 0

    def waiting(name: str) -> Tool:
        @tool(name=name, concurrency_safe=True)
        async def body(ctx: ToolContext) -> str:
            """Waits for cancellation."""
            nonlocal count
            count += 1
            if count == 2:
                both.set()
            started.set()
            await ctx.cancelled.wait()
            return f"{name} stopped"

        return body

    @tool
    async def later() -> str:
        """Never runs."""
        raise AssertionError("started after a cancel")

    agent = make_agent([waiting("a"), waiting("b"), later], "a", "b", "later")
    agent.followup(ask("go"))
    await both.wait()
    agent.cancel()
    await agent.when_idle()

    assert tool_timeline(agent.session) == [
        ("call", "c1"),
        ("call", "c2"),
        ("result", "c1"),
        ("result", "c2"),
        ("call", "c3"),
        ("result", "c3"),
    ]
    codes = [
        e.data.error and e.data.error.code for e in agent.session.events if e.type == "tool/result"
    ]
    assert codes == ["TOOL_CANCELLED", "TOOL_CANCELLED", "ABORTED_BEFORE_DISPATCH"]
    await agent.aclose()


async def test_awaiting_when_idle_inside_a_parallel_tool_is_refused() -> None:
    holder: list[AgentLoop] = []

    def waiting_for_idle(name: str) -> Tool:
        @tool(name=name, concurrency_safe=True)
        async def body() -> str:
            """Waits for its own agent (a mistake that would deadlock)."""
            await holder[0].when_idle()
            return "never"

        return body

    agent = make_agent([waiting_for_idle("a"), waiting_for_idle("b")], "a", "b")
    holder.append(agent)
    await run(agent, ask("go"))
    texts = result_texts(agent.session)
    assert "inside its own turn" in texts["c1"]
    assert "inside its own turn" in texts["c2"]
    await agent.aclose()
