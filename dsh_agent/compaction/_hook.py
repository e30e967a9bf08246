"""The agent loop's one door into context management.

The loop calls :class:`ContextHook` at three places and nowhere else: when it builds a
request (``request/context`` when the route or window changed), at each pre-step
boundary (compact under pressure), and after a step's model call failed with
``CONTEXT_WINDOW_EXCEEDED`` (compact maximally, then retry once). Without a
``Compaction`` policy only the first does anything.
"""

from __future__ import annotations

from dsh_agent._cancellation import CancelScope
from dsh_agent.compaction._config import KNOWN_CONTEXT_WINDOWS, Compaction
from dsh_agent.compaction._engine import CompactionEngine, CompactionResult
from dsh_agent.compaction._meter import TokenMeter
from dsh_agent.compaction._summarize import ModelSummarizer, Summarizer
from dsh_llm._request import ModelAdapter
from dsh_llm.failure_codes import CONTEXT_WINDOW_EXCEEDED
from dsh_session._session import Session
from dsh_session.events import (
    ErrorReason,
    RequestContextData,
    RequestContextEvent,
    RequestHeader,
    TurnEndReason,
)

_UNREAD = RequestContextData(provider="-", model="-")


class ContextHook:
    """Route metadata and compaction for one agent loop."""

    def __init__(
        self,
        *,
        session: Session,
        adapter: ModelAdapter,
        header: RequestHeader,
        policy: Compaction | None,
        context_window: int | None,
    ) -> None:
        if context_window is not None and context_window < 1:
            raise ValueError(f"context_window must be >= 1, not {context_window}")
        self._session = session
        self.context_window = context_window or KNOWN_CONTEXT_WINDOWS.get(header.config.model)
        self._logged: RequestContextData | None = _UNREAD
        self.engine: CompactionEngine | None = None
        if policy is not None:
            config = header.config
            summarizer: Summarizer = policy.summarizer or ModelSummarizer(
                adapter, provider=config.provider, model=config.model, max_tokens=policy.max_tokens
            )
            meter = TokenMeter(session, policy.counter)
            self.engine = CompactionEngine(session, meter, policy, summarizer, self.context_window)

    def note_route(self, header: RequestHeader) -> None:
        """Log ``request/context`` when the route or window differs from the last one
        logged (only once a window is known: without one it says nothing the
        ``request/header`` does not)."""
        if self.context_window is None:
            return
        if self._logged is _UNREAD:
            self._logged = next(
                (
                    e.data
                    for e in reversed(self._session.events)
                    if isinstance(e, RequestContextEvent)
                ),
                None,
            )
        context = RequestContextData(
            provider=header.config.provider,
            model=header.config.model,
            context_window=self.context_window,
        )
        if context != self._logged:
            self._session.append("request/context", context)
            self._logged = context

    async def before_step(self, scope: CancelScope, turn: int) -> None:
        """Compact when the next request would cross the threshold."""
        if self.engine is None:
            return
        with scope.interruptible():
            await self.engine.relieve_pressure(turn)

    async def recover(self, scope: CancelScope, turn: int, outcome: TurnEndReason | None) -> bool:
        """After a failed model call: whether it overflowed the context and a maximal
        compaction changed the surface, so the request should be sent again."""
        engine = self.engine
        if (
            engine is None
            or not engine.policy.overflow_recovery
            or not isinstance(outcome, ErrorReason)
            or outcome.error.code != CONTEXT_WINDOW_EXCEEDED
        ):
            return False
        with scope.interruptible():
            return await engine.compact_maximally(turn)

    async def compact_now(self) -> CompactionResult | None:
        """Summarize all but the last unit, between turns (a standalone bracket)."""
        if self.engine is None:
            raise ValueError("compact_now() needs an AgentLoop built with compaction=Compaction()")
        return await self.engine.summarize_head(None, retain_tokens=0)


__all__ = [
    "ContextHook",
]
