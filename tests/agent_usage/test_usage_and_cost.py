"""Usage and cost folded from the log (issue 32 #4): per request from a price table the
user supplies, summed per turn and per session, on the run result."""

from __future__ import annotations

import pytest

from dsh_agent import AgentLoop, ModelPrice, run, tool, usage_by_turn, usage_of
from dsh_llm import TokenUsage
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


@tool
async def noop() -> str:
    """Do nothing."""
    return "ok"


PRICES = {"p:m": ModelPrice(input=2.0, output=10.0, cached_input=0.5, cache_write=4.0)}


def _usage(fresh: int, output: int, read: int = 0, written: int = 0) -> TokenUsage:
    return TokenUsage(
        input_tokens=fresh,
        output_tokens=output,
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


async def test_cost_is_summed_per_request_per_turn_and_per_session() -> None:
    adapter = ScriptedAdapter(
        [
            reply(tool_calls=[{"name": "noop"}], usage=_usage(1000, 100, read=2000)),
            reply(text="one", usage=_usage(500, 50, written=1000)),
            reply(text="two", usage=_usage(100, 10)),
        ]
    )
    agent = AgentLoop(
        session=Session.create(), adapter=adapter, provider="p", model="m", tools=[noop]
    )
    first = await run(agent, "a")
    second = await run(agent, "b")
    request_costs = [
        (1000 * 2.0 + 2000 * 0.5 + 100 * 10.0) / 1e6,
        (500 * 2.0 + 1000 * 4.0 + 50 * 10.0) / 1e6,
        (100 * 2.0 + 10 * 10.0) / 1e6,
    ]
    used = first.usage(PRICES)
    assert (used.requests, used.tool_calls) == (2, 1)
    assert used.input_tokens == 4500  # 1000 + 2000 read + 500 + 1000 written
    assert (used.cache_read_tokens, used.cache_write_tokens) == (2000, 1000)
    assert used.output_tokens == 150 and used.total_tokens == 4650
    assert used.cost == pytest.approx(request_costs[0] + request_costs[1])
    assert second.usage(PRICES).cost == pytest.approx(request_costs[2])
    assert first.usage().cost is None  # no table, no cost

    turns = usage_by_turn(agent.session.events, prices=PRICES)
    assert sorted(turns) == [1, 2]
    assert turns[1].cost == pytest.approx(request_costs[0] + request_costs[1])
    session = usage_of(agent.session.events, prices=PRICES)
    assert session.cost == pytest.approx(sum(request_costs))
    assert session.requests == 3
    await agent.aclose()


async def test_a_model_missing_from_the_table_makes_the_cost_unknown_not_low() -> None:
    adapter = ScriptedAdapter([reply(text="x", usage=_usage(10, 10))])
    agent = AgentLoop(session=Session.create(), adapter=adapter, provider="p", model="other")
    used = (await run(agent, "a")).usage(PRICES)
    assert used.cost is None and used.unpriced_requests == 1
    await agent.aclose()


def test_a_price_must_be_a_finite_non_negative_number() -> None:
    with pytest.raises(ValueError, match="input"):
        ModelPrice(input=-1.0, output=1.0)
    with pytest.raises(ValueError, match="output"):
        ModelPrice(input=1.0, output=float("inf"))
