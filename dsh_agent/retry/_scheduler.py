"""The durable wait between a failed model attempt and its retry.

Before waiting, ``llm/retry`` is appended and flushed, so a process that dies during
the wait leaves the scheduled retry in the log; once the wait ends,
``llm/retry-started`` is appended and the step makes its next attempt over the same
history. Cancelling the turn ends the wait at once and writes no started event.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import Awaitable, Callable

from dsh_agent._cancellation import CancelScope
from dsh_agent.retry._backoff import retry_delay_ms
from dsh_agent.retry._chain import prior_retry
from dsh_agent.retry._policy import RetryPolicy
from dsh_llm._failure import LlmFailure
from dsh_session._events_harness import LlmRetryData, LlmRetryStartedData
from dsh_session._session import Session

_log = logging.getLogger("dsh_agent")


class RetryScheduler:
    """Decides, logs and waits out the retries of one agent loop's steps."""

    def __init__(
        self,
        *,
        session: Session,
        policy: RetryPolicy,
        checkpoint: Callable[[CancelScope], Awaitable[None]],
        random_sample: Callable[[], float] = random.random,
    ) -> None:
        self._session = session
        self._policy = policy
        self._checkpoint = checkpoint
        self._random = random_sample
        self._carried: tuple[int, int] | None = None

    def carry(self, turn: int, remaining: int | None) -> None:
        """Give step 1 of ``turn`` the ``remaining`` budget of a sequence an earlier
        turn cut short (None: the full budget)."""
        self._carried = None if remaining is None else (turn, remaining)

    async def wait(
        self, scope: CancelScope, turn: int, step: int, provider: str, failure: LlmFailure
    ) -> bool:
        """Whether to make another attempt of the step after ``failure``; when so, the
        wait is over (and logged) on return. Raises ``_TurnAborted`` when the turn is
        cancelled during the wait."""
        policy = self._policy
        if failure.code not in policy.codes:
            return False
        prior = prior_retry(self._session.events, turn, step, provider, policy.key)
        if prior is None:
            retry, retry_id = 1, str(uuid.uuid4())
            budget = self._budget(turn, step)
        else:
            retry, retry_id = prior.retry + 1, prior.retry_id
            budget = prior.max_retries if prior.max_retries is not None else policy.max_retries
        if retry > budget:
            return False
        spent_before = policy.max_retries - budget  # by the turns this sequence continues
        delay_ms = retry_delay_ms(policy, spent_before + retry, failure, self._random)
        if delay_ms is None:
            _log.warning(
                "agent %s: not retrying %s: the provider asked to wait %d ms, over the %d ms cap",
                self._session.id,
                failure.code,
                failure.provider_retry_after_ms,
                policy.max_delay_ms,
            )
            return False
        self._session.append(
            "llm/retry",
            LlmRetryData(
                retry_id=retry_id,
                turn=turn,
                step=step,
                provider=provider,
                mode="normal",
                policy_key=policy.key,
                retry=retry,
                max_retries=budget,
                delay_ms=delay_ms,
                failure=failure,
            ),
        )
        await self._checkpoint(scope)
        _log.info(
            "agent %s: %s (%s); retry %d of %d in %d ms",
            self._session.id,
            failure.code,
            failure.message,
            retry,
            budget,
            delay_ms,
        )
        with scope.interruptible():
            await asyncio.sleep(delay_ms / 1000)
        self._session.append(
            "llm/retry-started",
            LlmRetryStartedData(retry_id=retry_id, turn=turn, step=step, retry=retry),
        )
        return True

    def _budget(self, turn: int, step: int) -> int:
        carried = self._carried
        if carried is not None and carried[0] == turn and step == 1:
            return carried[1]
        return self._policy.max_retries


__all__ = [
    "RetryScheduler",
]
