"""Usage limits (issue 32 #4): checked before each request and each batch of tool
calls, per turn and per session, ending the turn ``error`` with code
``USAGE_LIMIT_EXCEEDED`` in the log and ``run()`` raising ``UsageLimitExceeded``."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_agent import (
    AgentLoop,
    TurnFailed,
    UsageLimitExceeded,
    UsageLimits,
    reconstruct_requests,
    run,
    tool,
    usage_of,
)
from dsh_llm import LlmFailure, TokenUsage
from dsh_llm.failure_codes import USAGE_LIMIT_EXCEEDED
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, TurnEndEvent, tool_failure_codes
from dsh_session.events import ErrorReason, ToolResultEvent
from dsh_session.stores import SqliteSessionStore

ran: list[int] = []


@tool
async def count(n: int) -> str:
    """Record n."""
    ran.append(n)
    return str(n)


def _usage(input_tokens: int, output_tokens: int, cached: int = 0) -> TokenUsage:
    return TokenUsage(
        input_tokens=input_tokens, output_tokens=output_tokens, cache_read_tokens=cached
    )


def _call(n: int) -> dict[str, object]:
    return {"name": "count", "arguments": {"n": n}}


def _agent(adapter: ScriptedAdapter, **options: object) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="p",
        model="m",
        tools=[count],
        **options,  # type: ignore[arg-type]
    )


def _end_reason(agent: AgentLoop) -> ErrorReason:
    ends = [e for e in agent.session.events if isinstance(e, TurnEndEvent)]
    reason = ends[-1].data.reason
    assert isinstance(reason, ErrorReason)
    return reason


async def test_the_request_limit_refuses_the_request_beyond_it_and_logs_why() -> None:
    adapter = ScriptedAdapter([reply(tool_calls=[_call(1)]), reply(tool_calls=[_call(2)]), "x"])
    agent = _agent(adapter, usage_limits=UsageLimits(request_limit=2))
    with pytest.raises(UsageLimitExceeded) as raised:
        await run(agent, "go")
    assert isinstance(raised.value, TurnFailed)  # callers catching TurnFailed still do
    assert len(adapter.requests) == 2  # the third was never sent
    reason = _end_reason(agent)
    assert reason.error.code == USAGE_LIMIT_EXCEEDED
    assert "request limit 2" in reason.error.message and "turn" in reason.error.message
    assert raised.value.result.usage().requests == 2
    assert list(reconstruct_requests(agent.session.events)) == adapter.requests  # no phantom
    await agent.aclose()


async def test_a_token_limit_refuses_the_next_request_once_reached() -> None:
    adapter = ScriptedAdapter(
        [
            reply(tool_calls=[_call(1)], usage=_usage(60, 10, cached=30)),
            reply(text="done", usage=_usage(5, 5)),
        ]
    )
    agent = _agent(adapter, usage_limits=UsageLimits(input_tokens_limit=90))
    with pytest.raises(UsageLimitExceeded, match="input token limit 90 is reached"):
        await run(agent, "go")  # 60 + 30 cached input tokens: the limit is reached
    assert len(adapter.requests) == 1
    await agent.aclose()


async def test_under_every_limit_nothing_is_refused() -> None:
    adapter = ScriptedAdapter([reply(tool_calls=[_call(1)], usage=_usage(10, 10)), "done"])
    limits = UsageLimits(
        request_limit=2,
        input_tokens_limit=11,
        output_tokens_limit=11,
        total_tokens_limit=21,
        tool_calls_limit=1,
    )
    agent = _agent(adapter, usage_limits=limits)
    result = await run(agent, "go")
    assert result.final_response == "done"
    await agent.aclose()


async def test_the_tool_call_limit_refuses_the_batch_before_any_call_runs() -> None:
    ran.clear()
    adapter = ScriptedAdapter(
        [reply(tool_calls=[_call(1)]), reply(tool_calls=[_call(2), _call(3)]), "x"]
    )
    agent = _agent(adapter, usage_limits=UsageLimits(tool_calls_limit=2))
    with pytest.raises(UsageLimitExceeded, match="tool call limit 2 would be exceeded") as raised:
        await run(agent, "go")
    assert ran == [1]  # neither call of the second batch ran
    results = [e.data for e in agent.session.events if isinstance(e, ToolResultEvent)]
    refused = [r for r in results if r.error is not None]
    assert [r.error.code for r in refused if r.error] == [
        tool_failure_codes.TOOL_CALL_LIMIT_EXCEEDED
    ] * 2
    assert raised.value.result.usage().tool_calls == 1  # refused calls are not counted
    assert len(adapter.requests) == 2
    # the log stays a valid conversation: the next turn's request carries every result
    agent2_adapter = ScriptedAdapter(["fine"])
    session = agent.session
    await agent.aclose()
    again = AgentLoop(session=session, adapter=agent2_adapter, provider="p", model="m")
    assert (await run(again, "and now?")).final_response == "fine"
    await again.aclose()


async def test_a_turn_limit_counts_each_turn_afresh() -> None:
    adapter = ScriptedAdapter(["a", "b", "c"])
    agent = _agent(adapter, usage_limits=UsageLimits(request_limit=1))
    for prompt in ("1", "2", "3"):
        await run(agent, prompt)
    assert len(adapter.requests) == 3
    await agent.aclose()


async def test_retries_count_as_requests() -> None:
    from dsh_agent import RetryPolicy

    down = LlmFailure(message="down", code="SERVER")
    adapter = ScriptedAdapter([down, down, "ok"])
    agent = _agent(
        adapter,
        usage_limits=UsageLimits(request_limit=2),
        retry=RetryPolicy(initial_delay_ms=1, max_delay_ms=1, jitter_ratio=0),
    )
    with pytest.raises(UsageLimitExceeded):
        await run(agent, "go")
    assert len(adapter.requests) == 2
    await agent.aclose()


async def test_a_session_limit_counts_what_earlier_processes_spent(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    session = Session.create()
    async with SqliteSessionStore(path) as store:
        first = AgentLoop(
            session=session,
            adapter=ScriptedAdapter(["a", "b"]),
            provider="p",
            model="m",
            store=store,
        )
        await run(first, "1")
        await run(first, "2")
        await first.aclose()

    async with SqliteSessionStore(path) as store:
        loaded = await store.load(session.id)
        adapter = ScriptedAdapter(["c", "d"])
        again = AgentLoop(
            session=loaded,
            adapter=adapter,
            provider="p",
            model="m",
            store=store,
            session_usage_limits=UsageLimits(request_limit=3),
        )
        assert (await run(again, "3")).final_response == "c"
        with pytest.raises(UsageLimitExceeded, match="request limit 3 is reached for this session"):
            await run(again, "4")
        assert len(adapter.requests) == 1
        await again.aclose()

    async with SqliteSessionStore(path) as store:  # the reason is durable
        reloaded = await store.load(session.id)
        ends = [e for e in reloaded.events if isinstance(e, TurnEndEvent)]
        last = ends[-1].data.reason
        assert isinstance(last, ErrorReason) and last.error.code == USAGE_LIMIT_EXCEEDED
        assert usage_of(reloaded.events).requests == 3


def test_limits_refuse_a_negative_or_non_int_value() -> None:
    with pytest.raises(ValueError, match="request_limit"):
        UsageLimits(request_limit=-1)
    with pytest.raises(ValueError, match="tool_calls_limit"):
        UsageLimits(tool_calls_limit=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="input_tokens_limit"):
        UsageLimits(input_tokens_limit=True)
