"""Sub-agents as tools (issue 32 #1): the child runs in its own session on the parent's
store, its header naming the parent session and its ``delegationDepth`` (the harness's
fields), its prompt naming the delegating call; its answer is the tool result, it
inherits cancellation, and a depth limit refuses runaway recursion."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from dsh_agent import AgentLoop, agent_tool, run
from dsh_agent._delegation import ChildFactory, delegation_depth
from dsh_llm import GenerateRequest, UserMessage, create_user_message
from dsh_llm.testing import FunctionAdapter, Reply, Response, ScriptedAdapter, reply
from dsh_session import Session, SessionHeader, tool_failure_codes
from dsh_session.events import AbortedReason, ToolResultData, ToolResultEvent, TurnEndEvent
from dsh_session.stores import SessionStore, SqliteSessionStore


def _text(answer: ToolResultData) -> str:
    (block,) = answer.message.content
    return "".join(getattr(part, "text", "") for part in block.content)


def _delegating(prompt: str, call_id: str = "call-1") -> Reply:
    return reply(
        tool_calls=[{"name": "research", "arguments": {"prompt": prompt}, "call_id": call_id}]
    )


def _child_factory(store: SessionStore | None, answers: list[Response]) -> ChildFactory:
    def build(session: Session) -> AgentLoop:
        return AgentLoop(
            session=session,
            adapter=ScriptedAdapter(answers),
            provider="p",
            model="child",
            store=store,
        )

    return build


async def test_the_child_answers_as_the_tool_result_and_the_logs_link_both_ways(
    tmp_path: Path,
) -> None:
    async with SqliteSessionStore(tmp_path / "s.db") as store:
        research = agent_tool(
            _child_factory(store, ["Paris is the capital."]),
            name="research",
            description="Ask a research agent.",
        )
        parent = AgentLoop(
            session=Session.create(),
            adapter=ScriptedAdapter([_delegating("capital of France?"), "It is Paris."]),
            provider="p",
            model="parent",
            tools=[research],
            store=store,
        )
        result = await run(parent, "Where is the government of France?")
        assert result.final_response == "It is Paris."
        [answer] = [e.data for e in parent.session.events if isinstance(e, ToolResultEvent)]
        assert answer.error is None
        assert _text(answer) == "Paris is the capital."
        assert isinstance(answer.meta, Mapping)
        child_id = str(answer.meta["childSession"])
        parent_id = parent.id
        await parent.aclose()

    async with SqliteSessionStore(tmp_path / "s.db") as store:  # both durable, linked
        child = await store.load(child_id)
        assert child.header.parent_session == parent_id
        assert child.header.model_dump(by_alias=True)["origin"] == "subagent"
        assert delegation_depth(child.header) == 1
        [prompt] = [m for m in child.derive_messages() if isinstance(m, UserMessage)]
        assert prompt.content[0].text == "capital of France?"  # type: ignore[union-attr]
        source = prompt.source.model_dump(by_alias=True)
        assert source["parentSession"] == parent_id and source["parentCallId"] == "call-1"
        listed = {h.id for h in await store.list_sessions()}
        assert {parent_id, child_id} <= listed


async def test_a_child_that_delegates_again_is_refused_past_the_depth_limit() -> None:
    tools_of_child: list[object] = []
    sessions: list[Session] = []

    def nested(session: Session) -> AgentLoop:
        sessions.append(session)  # every child delegates once more, until refused
        return AgentLoop(
            session=session,
            adapter=ScriptedAdapter([_delegating("deeper"), "done"]),
            provider="p",
            model="child",
            tools=tools_of_child,  # type: ignore[arg-type]
        )

    research = agent_tool(nested, name="research", description="Delegate.", max_depth=2)
    tools_of_child.append(research)
    parent = AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([_delegating("go"), "top done"]),
        provider="p",
        model="parent",
        tools=[research],
    )
    result = await run(parent, "start")
    assert result.final_response == "top done"
    assert [delegation_depth(s.header) for s in sessions] == [1, 2]  # no depth-3 child
    assert sessions[1].header.parent_session == sessions[0].id
    [refused] = [e.data for e in sessions[1].events if isinstance(e, ToolResultEvent)]
    assert refused.error is not None and refused.error.name == "DelegationDepthError"
    await parent.aclose()


async def test_the_depth_limit_refuses_with_a_typed_error_naming_the_depth() -> None:
    research = agent_tool(lambda s: None, name="research", description="x", max_depth=1)  # type: ignore[arg-type,return-value]
    header_depth = Session.create(
        header=SessionHeader.model_validate({"id": "deep-1", "createdAt": 1, "delegationDepth": 1})
    )
    agent = AgentLoop(
        session=header_depth,
        adapter=ScriptedAdapter([_delegating("x"), "after"]),
        provider="p",
        model="m",
        tools=[research],
    )
    await run(agent, "go")
    [answer] = [e.data for e in agent.session.events if isinstance(e, ToolResultEvent)]
    assert answer.error is not None
    assert answer.error.name == "DelegationDepthError"
    assert answer.error.code == tool_failure_codes.TOOL_FAILED
    assert "depth 2, over the limit of 1" in _text(answer)
    await agent.aclose()


async def test_cancelling_the_parent_cancels_the_child_with_cause_parent() -> None:
    child_started = asyncio.Event()
    children: list[AgentLoop] = []

    async def slow(request: GenerateRequest) -> str:
        child_started.set()
        await asyncio.sleep(30)
        return "never"

    def build(session: Session) -> AgentLoop:
        child = AgentLoop(session=session, adapter=FunctionAdapter(slow), provider="p", model="c")
        children.append(child)
        return child

    research = agent_tool(build, name="research", description="x")
    parent = AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([_delegating("slow task")]),
        provider="p",
        model="m",
        tools=[research],
    )
    parent.followup(create_user_message("go"))
    await asyncio.wait_for(child_started.wait(), 10)
    parent.cancel()
    await asyncio.wait_for(parent.when_idle(), 10)
    [child] = children
    [end] = [e for e in child.session.events if isinstance(e, TurnEndEvent)]
    assert isinstance(end.data.reason, AbortedReason)
    assert end.data.reason.reason.kind == "parent"
    [answer] = [e.data for e in parent.session.events if isinstance(e, ToolResultEvent)]
    assert answer.error is not None and answer.error.code == tool_failure_codes.TOOL_CANCELLED
    await parent.aclose()


async def test_a_child_on_another_store_is_refused(tmp_path: Path) -> None:
    async with SqliteSessionStore(tmp_path / "s.db") as store:
        research = agent_tool(
            _child_factory(None, ["x"]),
            name="research",
            description="x",
        )
        parent = AgentLoop(
            session=Session.create(),
            adapter=ScriptedAdapter([_delegating("x"), "after"]),
            provider="p",
            model="m",
            tools=[research],
            store=store,
        )
        await run(parent, "go")
        [answer] = [e.data for e in parent.session.events if isinstance(e, ToolResultEvent)]
        assert answer.error is not None
        assert "durable on its parent's store" in _text(answer)
        await parent.aclose()
