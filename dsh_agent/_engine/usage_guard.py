"""The usage limits of one agent loop, checked against the log before each request
and before each batch of tool calls (:class:`~dsh_agent.UsageLimits`).

The guard folds only the events appended since its last check, so a check costs the
events of one step, not the session; it starts from the whole log, so a session's
limits count what earlier processes spent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

from dsh_agent._usage import UsageLimits, UsageTally, UsageTotals
from dsh_llm._failure import LlmFailure
from dsh_llm.failure_codes import USAGE_LIMIT_EXCEEDED
from dsh_session._session import Session

_Check: TypeAlias = Callable[[UsageLimits, UsageTotals], str | None]
"""One kind of check: the reason it refuses for ``limits`` after ``spent``, or None."""


class UsageGuard:
    """Refuses what would break a turn's or the session's :class:`UsageLimits`."""

    def __init__(
        self, session: Session, per_turn: UsageLimits | None, per_session: UsageLimits | None
    ) -> None:
        self._session = session
        self._per_turn = per_turn
        self._per_session = per_session
        self._tally = UsageTally()
        self._seen = 0

    def refuse_request(self, turn: int) -> LlmFailure | None:
        """The failure to end ``turn`` with instead of sending its next request."""
        return self._refuse(turn, lambda limits, spent: limits.refuse_request(spent))

    def refuse_tool_calls(self, turn: int, calls: int) -> LlmFailure | None:
        """The failure to end ``turn`` with instead of running ``calls`` tool calls."""
        return self._refuse(turn, lambda limits, spent: limits.refuse_tool_calls(spent, calls))

    def _refuse(self, turn: int, check: _Check) -> LlmFailure | None:
        self._catch_up()
        for scope, limits, spent in (
            ("turn", self._per_turn, self._tally.turn),
            ("session", self._per_session, None),
        ):
            if limits is None:
                continue
            reason = check(limits, self._tally.session if spent is None else spent(turn))
            if reason is not None:
                return LlmFailure(
                    message=f"usage limit: {reason} for this {scope}", code=USAGE_LIMIT_EXCEEDED
                )
        return None

    def _catch_up(self) -> None:
        events = self._session.events
        for index in range(self._seen, len(events)):
            self._tally.add(events[index])
        self._seen = len(events)


__all__ = [
    "UsageGuard",
]
