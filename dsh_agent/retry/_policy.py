"""The retry policy of an agent loop: which failed model attempts are tried again,
how often, and how long to wait before each (the harness's ``normal`` mode)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from dsh_llm.failure_codes import RETRYABLE_CODES


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retry a failed model attempt whose code is in ``codes`` up to ``max_retries``
    times in one step, over the same durable history. The n-th retry waits
    ``initial_delay_ms * 2**(n-1)`` capped at ``max_delay_ms``, scaled by a random
    factor in ``1 ± jitter_ratio`` (and capped again). A provider's
    ``providerRetryAfterMs`` replaces that delay when it is at most ``max_delay_ms``;
    a longer one ends the sequence at once rather than hang."""

    max_retries: int = 5
    initial_delay_ms: float = 500
    max_delay_ms: float = 10_000
    jitter_ratio: float = 0.1
    codes: frozenset[str] = field(default=RETRYABLE_CODES)
    """The eligible ``LlmFailure.code`` values (default: ``EMPTY_RESPONSE``,
    ``RATE_LIMIT``, ``SERVER``, ``TIMEOUT``, ``TRANSPORT``)."""

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int):
            raise TypeError(f"max_retries must be an int, not {self.max_retries!r}")
        if self.max_retries < 1:
            raise ValueError(
                f"max_retries must be at least 1, not {self.max_retries} "
                "(pass retry=None to turn retries off)"
            )
        for name in ("initial_delay_ms", "max_delay_ms"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, not {value!r}")
        if self.initial_delay_ms > self.max_delay_ms:
            raise ValueError(
                f"initial_delay_ms ({self.initial_delay_ms}) exceeds "
                f"max_delay_ms ({self.max_delay_ms})"
            )
        if not (0 <= self.jitter_ratio <= 1):
            raise ValueError(f"jitter_ratio must be within 0..1, not {self.jitter_ratio!r}")
        codes = frozenset(self.codes)
        if not codes or not all(isinstance(code, str) and code for code in codes):
            raise ValueError(f"codes must be a non-empty set of failure codes, not {self.codes!r}")
        object.__setattr__(self, "codes", codes)

    @property
    def key(self) -> str:
        """The canonical identity of the policy written as ``policyKey``: every field
        that changes behaviour, codes sorted (eligibility is set membership), numbers
        as the harness's ``JSON.stringify`` writes them (``500``, not ``500.0``)."""
        return json.dumps(
            [
                "normal",
                self.max_retries,
                sorted(self.codes),
                _js_number(self.initial_delay_ms),
                _js_number(self.max_delay_ms),
                _js_number(self.jitter_ratio),
            ],
            separators=(",", ":"),
        )


def _js_number(value: float) -> float | int:
    """``value`` as JavaScript would print it: an integral float without ``.0``."""
    return int(value) if float(value).is_integer() else value


__all__ = [
    "RetryPolicy",
]
