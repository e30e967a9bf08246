"""Cancellation during a backoff wait, and ``agent.retry()``: the failed last turn
run again over the same history, with no new input and no id twice."""

from __future__ import annotations

import asyncio

import pytest
from providers.http_stub import StubServer

from dsh_agent import (
    AgentLoop,
    CallNext,
    NothingToRetryError,
    PreStep,
    PreStepDecision,
    RetryPolicy,
    TurnFailed,
    run,
    run_retry,
)
from dsh_session import AbortedReason, TurnEndEvent, UserMessageEvent

from .support import answer, make_agent, prompt, retries, server_error, started

FOREVER = RetryPolicy(max_retries=2, initial_delay_ms=600_000, max_delay_ms=600_000)
"""A wait that would outlast the test (its timeout) unless cancellation ends it."""


async def _logged_retry(agent: AgentLoop, count: int) -> None:
    """Return once ``count`` retries are scheduled (polling: the wait logs no event)."""
    while len(retries(agent.session.events)) < count:
        await asyncio.sleep(0.005)


async def test_cancelling_during_backoff_ends_the_wait_at_once(stub: StubServer) -> None:
    stub.script(server_error(503), answer("never sent"))
    agent = make_agent(stub.url, retry=FOREVER)

    agent.followup(prompt())
    await asyncio.wait_for(_logged_retry(agent, 1), 30)
    agent.cancel("user")
    await asyncio.wait_for(agent.when_idle(), 30)

    events = agent.session.events
    assert started(events) == []  # the wait never ended: no attempt started
    [end] = [e for e in events if isinstance(e, TurnEndEvent)]
    assert isinstance(end.data.reason, AbortedReason)
    assert len(stub.requests) == 1


async def test_retry_runs_the_failed_turn_again_without_new_input(stub: StubServer) -> None:
    stub.script(server_error(500), answer("second time lucky"))
    agent = make_agent(stub.url, retry=None)
    message = prompt("what now?")
    with pytest.raises(TurnFailed):
        await run(agent, message)

    result = await run_retry(agent)

    assert result.final_response == "second time lucky"
    assert stub.bodies[0] == stub.bodies[1]  # the very request, once more
    entered = [e.data for e in agent.session.events if isinstance(e, UserMessageEvent)]
    assert entered == [message]  # logged once, in the failed turn only
    ids = [m.id for m in agent.session.derive_messages()]
    assert len(ids) == len(set(ids)) == 2
    assert ids[0] == message.id


async def test_retry_after_an_exhausted_sequence_gets_a_fresh_budget(stub: StubServer) -> None:
    policy = RetryPolicy(max_retries=1, initial_delay_ms=1, max_delay_ms=5, jitter_ratio=0)
    stub.script(server_error(), server_error(), server_error(), answer("ok"))
    agent = make_agent(stub.url, retry=policy)
    await run(agent, prompt(), raise_on_error=False)

    result = await run_retry(agent)

    assert result.final_response == "ok"
    scheduled = retries(agent.session.events)
    assert [(r.turn, r.retry, r.max_retries) for r in scheduled] == [(1, 1, 1), (2, 1, 1)]


async def test_nothing_to_retry_after_a_success_or_before_any_turn(stub: StubServer) -> None:
    stub.script(answer("fine"))
    agent = make_agent(stub.url)
    with pytest.raises(NothingToRetryError, match="no finished turn"):
        agent.retry()
    await run(agent, prompt())
    seq = agent.session.seq

    with pytest.raises(NothingToRetryError, match="ended 'completed'"):
        agent.retry()
    assert agent.session.seq == seq  # nothing written


async def test_retry_while_a_turn_runs_is_refused(stub: StubServer) -> None:
    stub.script(server_error(503))
    agent = make_agent(stub.url, retry=FOREVER)
    agent.followup(prompt())
    await asyncio.wait_for(_logged_retry(agent, 1), 30)

    with pytest.raises(Exception, match="retry\\(\\) needs it idle"):
        agent.retry()
    agent.cancel("user")
    await agent.when_idle()


async def test_retry_after_a_cancelled_wait_keeps_the_budget_left(stub: StubServer) -> None:
    stub.script(server_error(503), server_error(503), answer("resumed"))
    agent = make_agent(stub.url, retry=FOREVER)
    agent.followup(prompt())
    await asyncio.wait_for(_logged_retry(agent, 1), 30)
    agent.cancel("user")
    await agent.when_idle()

    # Retry 1 of 2 was cut short: the new turn makes it at once; one retry is left.
    retrying = asyncio.ensure_future(run_retry(agent, raise_on_error=False))
    await asyncio.wait_for(_logged_retry(agent, 2), 30)
    second = retries(agent.session.events)[1]
    assert (second.turn, second.retry, second.max_retries) == (2, 1, 1)
    agent.cancel("user")
    result = await retrying
    assert result.finish_reason == "aborted"
    assert len(stub.requests) == 2


async def test_a_turn_that_failed_before_asking_the_model_is_not_retried(
    stub: StubServer,
) -> None:
    agent = make_agent(stub.url)

    async def broken(step: PreStep, call_next: CallNext) -> PreStepDecision:
        raise RuntimeError("pre-step broke")

    agent.on_pre_step(broken)
    await run(agent, prompt(), raise_on_error=False)

    with pytest.raises(NothingToRetryError, match="failed before asking the model"):
        agent.retry()
    assert stub.requests == []
