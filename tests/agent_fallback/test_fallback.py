"""Model fallback (issue 32 #5): ``FallbackAdapter([primary, secondary], on=codes)``
moves a failed step to the next model once the retry policy has given up on the one
that failed; each attempt's provider and model are in the log (a ``request/header``
change before the first attempt on the next model), so the requests rebuild exactly."""

from __future__ import annotations

import pytest

from dsh_agent import AgentLoop, RetryPolicy, TurnFailed, reconstruct_requests, run
from dsh_llm import LlmFailure
from dsh_llm.failure_codes import AUTH, RATE_LIMIT, SERVER
from dsh_llm.providers import FallbackAdapter
from dsh_llm.testing import ScriptedAdapter
from dsh_session import LlmRetryEvent, Session
from dsh_session.events import AssistantMessageEvent, RequestHeaderEvent

DOWN = LlmFailure(message="overloaded", code=SERVER)
FAST = RetryPolicy(max_retries=2, initial_delay_ms=1, max_delay_ms=1, jitter_ratio=0)


class Named(ScriptedAdapter):
    """A scripted model that names its provider and model, as a real adapter does."""

    def __init__(self, provider: str, model: str, responses: list[object]) -> None:
        super().__init__(responses)  # type: ignore[arg-type]
        self.provider, self.model = provider, model


def _agent(adapter: FallbackAdapter, retry: RetryPolicy | None = FAST) -> AgentLoop:
    return AgentLoop(session=Session.create(), adapter=adapter, retry=retry, check_requests=True)


async def test_retries_first_then_the_next_model_and_the_log_says_which() -> None:
    primary = Named("alpha", "big", [DOWN, DOWN, DOWN])
    secondary = Named("beta", "small", ["from beta"])
    agent = _agent(FallbackAdapter([primary, secondary], on=frozenset({SERVER})))
    result = await run(agent, "hi")
    assert result.final_response == "from beta"
    assert len(primary.requests) == 3  # the first attempt and both retries
    assert [(r.provider, r.model) for r in secondary.requests] == [("beta", "small")]
    events = agent.session.events
    retries = [e.data for e in events if isinstance(e, LlmRetryEvent)]
    assert [(r.provider, r.retry) for r in retries] == [("alpha", 1), ("alpha", 2)]
    headers = [e.data for e in events if isinstance(e, RequestHeaderEvent)]
    assert [(h.reason, h.header.config.provider, h.header.config.model) for h in headers] == [
        ("initial", "alpha", "big"),
        ("change", "beta", "small"),
    ]
    [answer] = [e.data.message for e in events if isinstance(e, AssistantMessageEvent)]
    assert (answer.source.provider, answer.source.model) == ("beta", "small")
    sent = [*primary.requests, *secondary.requests]
    assert list(reconstruct_requests(events)) == sent  # every attempt rebuilds exactly
    await agent.aclose()


async def test_the_next_turn_starts_on_the_first_model_again() -> None:
    primary = Named("alpha", "big", [DOWN, "alpha again"])
    secondary = Named("beta", "small", ["from beta"])
    agent = _agent(FallbackAdapter([primary, secondary], on=frozenset({SERVER})), retry=None)
    assert (await run(agent, "one")).final_response == "from beta"
    assert (await run(agent, "two")).final_response == "alpha again"
    sent = [primary.requests[0], secondary.requests[0], primary.requests[1]]
    assert list(reconstruct_requests(agent.session.events)) == sent
    await agent.aclose()


async def test_a_code_not_named_does_not_fall_back() -> None:
    primary = Named("alpha", "big", [LlmFailure(message="bad key", code=AUTH)])
    secondary = Named("beta", "small", ["unused"])
    agent = _agent(FallbackAdapter([primary, secondary], on=frozenset({SERVER, RATE_LIMIT})))
    with pytest.raises(TurnFailed, match="AUTH"):
        await run(agent, "hi")
    assert secondary.requests == []
    await agent.aclose()


async def test_when_every_model_fails_the_turn_fails_with_the_last_failure() -> None:
    primary = Named("alpha", "big", [DOWN])
    secondary = Named("beta", "small", [LlmFailure(message="also down", code=SERVER)])
    agent = _agent(FallbackAdapter([primary, secondary], on=frozenset({SERVER})), retry=None)
    with pytest.raises(TurnFailed, match="also down"):
        await run(agent, "hi")
    await agent.aclose()


def test_adapters_must_name_distinct_models() -> None:
    with pytest.raises(ValueError, match="names no provider"):
        FallbackAdapter([ScriptedAdapter([])])
    same = Named("alpha", "big", [])
    with pytest.raises(ValueError, match="same provider and model"):
        FallbackAdapter([same, Named("alpha", "big", [])])
    with pytest.raises(ValueError, match="at least one"):
        FallbackAdapter([])
