"""How long the n-th retry of a sequence waits: bounded exponential backoff with
symmetric jitter, or the provider's own ``retry-after`` when it is within the cap."""

from __future__ import annotations

from collections.abc import Callable

from dsh_agent.retry._policy import RetryPolicy
from dsh_llm._failure import LlmFailure


def local_delay_ms(policy: RetryPolicy, retry: int, random: Callable[[], float]) -> int:
    """The jittered exponential delay of retry number ``retry`` (1-based)."""
    # 2.0**1023 is the largest finite power of two (2.0**1024 raises OverflowError);
    # the product may still overflow to inf, which the cap below brings back.
    exponent = min(retry - 1, 1023)
    exponential = min(policy.initial_delay_ms * 2.0**exponent, policy.max_delay_ms)
    jitter = 1 - policy.jitter_ratio + 2 * policy.jitter_ratio * random()
    return round(min(exponential * jitter, policy.max_delay_ms))


def retry_delay_ms(
    policy: RetryPolicy, retry: int, failure: LlmFailure, random: Callable[[], float]
) -> int | None:
    """The wait before retry number ``retry`` of ``failure``, or None when the
    provider asked for longer than ``max_delay_ms`` (waiting that long would look like
    a hang; giving up lets the caller decide)."""
    asked = failure.provider_retry_after_ms
    if asked is not None and asked > 0:
        return asked if asked <= policy.max_delay_ms else None
    return local_delay_ms(policy, retry, random)


__all__ = [
    "local_delay_ms",
    "retry_delay_ms",
]
