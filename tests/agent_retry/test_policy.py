"""The policy and its backoff, as pure functions: exponential, capped, jittered
symmetrically, and a provider's retry-after honoured up to the cap."""

from __future__ import annotations

import pytest

from dsh_agent import AgentLoop, RetryPolicy, TurnFailed, run
from dsh_agent.retry._backoff import local_delay_ms, retry_delay_ms
from dsh_llm import create_user_message
from dsh_llm._failure import LlmFailure
from dsh_llm.failure_codes import RETRYABLE_CODES
from dsh_llm.testing import ScriptedAdapter
from dsh_session import LlmRetryEvent, Session


def test_the_default_policy_is_the_pinned_one() -> None:
    assert RetryPolicy() == RetryPolicy(
        max_retries=5, initial_delay_ms=500, max_delay_ms=10_000, jitter_ratio=0.1
    )
    assert (
        RetryPolicy().codes
        == RETRYABLE_CODES
        == {
            "RATE_LIMIT",
            "SERVER",
            "TIMEOUT",
            "TRANSPORT",
            "EMPTY_RESPONSE",
        }
    )


def test_backoff_doubles_up_to_the_cap() -> None:
    policy = RetryPolicy(initial_delay_ms=500, max_delay_ms=3000, jitter_ratio=0)
    delays = [local_delay_ms(policy, retry, lambda: 0.5) for retry in range(1, 7)]
    assert delays == [500, 1000, 2000, 3000, 3000, 3000]


@pytest.mark.parametrize(("sample", "expected"), [(0.0, 900), (0.5, 1000), (1.0, 1100)])
def test_jitter_is_symmetric_around_the_delay(sample: float, expected: int) -> None:
    policy = RetryPolicy(initial_delay_ms=1000, max_delay_ms=10_000, jitter_ratio=0.1)
    assert local_delay_ms(policy, 1, lambda: sample) == expected


def test_jitter_never_exceeds_the_cap() -> None:
    policy = RetryPolicy(initial_delay_ms=10_000, max_delay_ms=10_000, jitter_ratio=0.5)
    assert local_delay_ms(policy, 4, lambda: 1.0) == 10_000


def test_a_provider_retry_after_within_the_cap_replaces_the_backoff() -> None:
    failure = LlmFailure(message="slow down", code="RATE_LIMIT", provider_retry_after_ms=7000)
    assert retry_delay_ms(RetryPolicy(), 1, failure, lambda: 0.0) == 7000


def test_a_provider_retry_after_over_the_cap_gives_up() -> None:
    failure = LlmFailure(message="slow down", code="RATE_LIMIT", provider_retry_after_ms=10_001)
    assert retry_delay_ms(RetryPolicy(), 1, failure, lambda: 0.0) is None


def test_the_key_names_every_behaviour_with_codes_sorted() -> None:
    one = RetryPolicy(codes=frozenset({"SERVER", "RATE_LIMIT"}))
    same = RetryPolicy(codes=frozenset({"RATE_LIMIT", "SERVER"}))
    assert one.key == same.key == '["normal",5,["RATE_LIMIT","SERVER"],500,10000,0.1]'
    assert RetryPolicy(max_retries=4).key != RetryPolicy().key
    assert RetryPolicy(initial_delay_ms=500.0, jitter_ratio=0.0).key.endswith(",500,10000,0]")


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"max_retries": 0}, "retry=None"),
        ({"initial_delay_ms": -1}, "initial_delay_ms"),
        ({"max_delay_ms": float("inf")}, "max_delay_ms"),
        ({"initial_delay_ms": 20, "max_delay_ms": 10}, "exceeds"),
        ({"jitter_ratio": 1.5}, "jitter_ratio"),
        ({"codes": frozenset()}, "codes"),
    ],
)
def test_a_policy_that_makes_no_sense_is_refused(options: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        RetryPolicy(**options)  # type: ignore[arg-type]


def test_max_retries_must_be_an_int() -> None:
    with pytest.raises(TypeError, match="max_retries"):
        RetryPolicy(max_retries=2.5)  # type: ignore[arg-type]


async def test_retries_are_on_by_default_and_off_with_none() -> None:
    failure = LlmFailure(message="down", code="SERVER")
    default = AgentLoop(
        session=Session.create(), adapter=ScriptedAdapter([failure, "ok"]), provider="p", model="m"
    )
    result = await run(default, create_user_message(content="hi", source={"kind": "user"}))
    assert result.final_response == "ok"
    [scheduled] = [e.data for e in result.events if isinstance(e, LlmRetryEvent)]
    assert (scheduled.retry, scheduled.max_retries) == (1, 5)
    assert 450 <= scheduled.delay_ms <= 550  # 500 ms +- 10 %
    assert scheduled.policy_key == RetryPolicy().key

    off = AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([failure, "ok"]),
        provider="p",
        model="m",
        retry=None,
    )
    with pytest.raises(TurnFailed) as raised:
        await run(off, create_user_message(content="hi", source={"kind": "user"}))
    assert raised.value.failure == failure
    await default.aclose()
    await off.aclose()
