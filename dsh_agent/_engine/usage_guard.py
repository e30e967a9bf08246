"""The usage limits of one agent loop, checked against the log before each request
and before each batch of tool calls (:class:`~dsh_agent.UsageLimits`).

The guard folds only the events appended since its last check, so a check costs the
events of one step, not the session; it starts from the whole log, so a session's
limits count what earlier processes spent.
"""

from __future__ import annotations

from dsh_agent._usage import UsageLimits, UsageTally
from dsh_llm._failure import LlmFailure
from dsh_llm.failure_codes import USAGE_LIMIT_EXCEEDED
from dsh_session._session import Session


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
        self._catch_up()
        per_turn, per_session = self._per_turn, self._per_session
        if per_turn is not None:
            reason = per_turn.refuse_request(self._tally.running(turn))
            if reason is not None:
                return _refusal(reason, "turn")
        if per_session is not None:
            reason = per_session.refuse_request(self._tally.running())
            if reason is not None:
                return _refusal(reason, "session")
        return None

    def refuse_tool_calls(self, turn: int, calls: int) -> LlmFailure | None:
        """The failure to end ``turn`` with instead of running ``calls`` tool calls."""
        self._catch_up()
        per_turn, per_session = self._per_turn, self._per_session
        if per_turn is not None:
            reason = per_turn.refuse_tool_calls(self._tally.running(turn), calls)
            if reason is not None:
                return _refusal(reason, "turn")
        if per_session is not None:
            reason = per_session.refuse_tool_calls(self._tally.running(), calls)
            if reason is not None:
                return _refusal(reason, "session")
        return None

    def _catch_up(self) -> None:
        session = self._session
        seen, end = self._seen, session.seq
        if seen != end:
            self._tally.add_all(session.events[seen:end])  # one C copy of the new tail
            self._seen = end


def _refusal(reason: str, scope: str) -> LlmFailure:
    return LlmFailure(message=f"usage limit: {reason} for this {scope}", code=USAGE_LIMIT_EXCEEDED)


__all__ = [
    "UsageGuard",
]
