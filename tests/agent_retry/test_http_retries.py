"""Retries through the real OpenAI adapter and a real HTTP server on 127.0.0.1: each
failed attempt and each scheduled retry is in the log, the retry is sent over the
same history, and the log rebuilds every request the server received."""

from __future__ import annotations

import socket

import pytest
from providers.frames import chat_chunk
from providers.http_stub import Reply, StubServer, sse_reply

from dsh_agent import RetryPolicy, TurnFailed, run
from dsh_session import AssistantMessageEvent, LlmRetryEvent, LlmRetryStartedEvent

from .support import (
    FAST,
    answer,
    assert_log_rebuilds_the_wire_requests,
    make_agent,
    prompt,
    retries,
    server_error,
    started,
)


async def test_a_429_with_retry_after_is_retried_after_the_delay_it_asked_for(
    stub: StubServer,
) -> None:
    stub.script(server_error(429, **{"retry-after-ms": "15"}), answer("hi there"))
    agent = make_agent(stub.url)

    result = await run(agent, prompt())

    assert result.final_response == "hi there"
    assert result.failure is None and result.finish_reason == "completed"
    [scheduled] = retries(result.events)
    assert scheduled.delay_ms == 15  # the provider's delay, without jitter
    assert (scheduled.retry, scheduled.max_retries, scheduled.mode) == (1, 3, "normal")
    assert scheduled.failure.code == "RATE_LIMIT" and scheduled.failure.status == 429
    assert scheduled.provider == "openai" and scheduled.policy_key == FAST.key
    [begun] = started(result.events)
    assert (begun.retry_id, begun.turn, begun.step, begun.retry) == (
        scheduled.retry_id,
        scheduled.turn,
        scheduled.step,
        1,
    )
    assert stub.bodies[0] == stub.bodies[1]  # the same request, sent again
    await assert_log_rebuilds_the_wire_requests(agent, stub)


async def test_500s_back_off_exponentially_in_one_sequence(stub: StubServer) -> None:
    stub.script(server_error(), server_error(502), server_error(503), answer("finally"))
    agent = make_agent(stub.url)

    result = await run(agent, prompt())

    assert result.final_response == "finally"
    scheduled = retries(result.events)
    assert [r.delay_ms for r in scheduled] == [1, 2, 4]
    assert [r.retry for r in scheduled] == [1, 2, 3]
    assert [r.failure.status for r in scheduled] == [500, 502, 503]
    assert len({r.retry_id for r in scheduled}) == 1
    assert [s.retry for s in started(result.events)] == [1, 2, 3]
    # Each wait is logged before it starts and its end before the next attempt.
    kinds = [
        type(event).__name__
        for event in result.events
        if isinstance(event, LlmRetryEvent | LlmRetryStartedEvent)
    ]
    assert kinds == ["LlmRetryEvent", "LlmRetryStartedEvent"] * 3
    await assert_log_rebuilds_the_wire_requests(agent, stub)


async def test_an_exhausted_budget_raises_turn_failed_with_the_last_failure(
    stub: StubServer,
) -> None:
    stub.script(*(server_error(503) for _ in range(4)))
    agent = make_agent(stub.url)

    with pytest.raises(TurnFailed) as raised:
        await run(agent, prompt())

    failure = raised.value.failure
    assert failure.code == "SERVER" and failure.status == 503
    assert str(raised.value) == "the model call failed (SERVER): HTTP 503: scripted 503"
    result = raised.value.result
    assert result.failure == failure and result.finish_reason == "error"
    assert [r.retry for r in retries(result.events)] == [1, 2, 3]
    assert len(stub.requests) == 4  # one attempt and three retries, no more
    await assert_log_rebuilds_the_wire_requests(agent, stub)


async def test_a_dead_port_is_a_transport_failure_retried_then_reported() -> None:
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    agent = make_agent(f"http://127.0.0.1:{port}")

    result = await run(agent, prompt(), raise_on_error=False)

    assert result.failure is not None and result.failure.code == "TRANSPORT"
    assert [r.failure.code for r in retries(result.events)] == ["TRANSPORT"] * 3
    assert result.final_response is None


async def test_a_stream_cut_mid_way_is_retried_and_its_prefix_never_reaches_history(
    stub: StubServer,
) -> None:
    cut = sse_reply([chat_chunk({"content": "Half an ans"})], then="cut")
    stub.script(cut, answer("A whole answer."))
    agent = make_agent(stub.url)

    result = await run(agent, prompt())

    assert result.final_response == "A whole answer."
    [scheduled] = retries(result.events)
    assert scheduled.failure.code == "TRANSPORT"
    committed = [e for e in agent.session.events if isinstance(e, AssistantMessageEvent)]
    assert len(committed) == 1
    assert [m.role for m in agent.session.derive_messages()] == ["user", "assistant"]
    assert stub.bodies[0] == stub.bodies[1]
    await assert_log_rebuilds_the_wire_requests(agent, stub)


async def test_an_idle_stream_times_out_and_is_retried(stub: StubServer) -> None:
    idle = sse_reply([chat_chunk({"content": "thinking"})], then="hold")
    stub.script(idle, answer("done"))
    agent = make_agent(stub.url, idle_timeout=0.2)

    result = await run(agent, prompt())

    assert result.final_response == "done"
    [scheduled] = retries(result.events)
    assert scheduled.failure.code == "TIMEOUT"
    await assert_log_rebuilds_the_wire_requests(agent, stub)


async def test_no_first_chunk_in_time_is_a_timeout_and_is_retried(stub: StubServer) -> None:
    stub.script(Reply(stall=True), answer("late but here"))
    agent = make_agent(stub.url, first_chunk_timeout=0.2)

    result = await run(agent, prompt())

    assert result.final_response == "late but here"
    [scheduled] = retries(result.events)
    assert scheduled.failure.code == "TIMEOUT"
    assert "no response within 0.2 s" in scheduled.failure.message
    await assert_log_rebuilds_the_wire_requests(agent, stub)


async def test_a_retry_after_over_the_cap_gives_up_at_once(stub: StubServer) -> None:
    stub.script(server_error(429, **{"retry-after": "3600"}), answer("never sent"))
    agent = make_agent(stub.url)

    with pytest.raises(TurnFailed) as raised:
        await run(agent, prompt())

    assert raised.value.failure.provider_retry_after_ms == 3_600_000
    assert retries(agent.session.events) == []
    assert len(stub.requests) == 1


async def test_a_code_outside_the_policy_is_not_retried(stub: StubServer) -> None:
    stub.script(server_error(401), answer("never sent"))
    agent = make_agent(stub.url)

    with pytest.raises(TurnFailed) as raised:
        await run(agent, prompt())

    assert raised.value.failure.code == "AUTH"
    assert retries(agent.session.events) == [] and len(stub.requests) == 1


async def test_the_eligible_codes_are_the_policys(stub: StubServer) -> None:
    only_server = RetryPolicy(
        max_retries=2, initial_delay_ms=1, max_delay_ms=5, codes=frozenset({"SERVER"})
    )
    stub.script(server_error(429), answer("never sent"))
    agent = make_agent(stub.url, retry=only_server)

    result = await run(agent, prompt(), raise_on_error=False)

    assert result.failure is not None and result.failure.code == "RATE_LIMIT"
    assert retries(result.events) == [] and len(stub.requests) == 1


async def test_retry_none_sends_one_attempt(stub: StubServer) -> None:
    stub.script(server_error(500), answer("never sent"))
    agent = make_agent(stub.url, retry=None)

    result = await run(agent, prompt(), raise_on_error=False)

    assert result.failure is not None and result.failure.code == "SERVER"
    assert retries(result.events) == [] and len(stub.requests) == 1
