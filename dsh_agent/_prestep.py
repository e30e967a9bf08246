"""The pre-step waterfall: handlers that decide what enters each step.

Handlers compose like middleware: the first registered is the outermost, each may
call ``call_next`` (optionally with a modified :class:`PreStep`) and returns the
decision. The innermost default enters the batch it is given unchanged. The types a
handler sees and returns are the agent surface's (:mod:`dsh_agent._agent`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

from dsh_agent._agent import Enter, PreStep, PreStepDecision, PreStepHandler, Reject


async def run_pre_step(handlers: Sequence[PreStepHandler], step: PreStep) -> PreStepDecision:
    """Run ``handlers`` (outermost first) over ``step`` and return the decision."""

    async def call(index: int, current: PreStep) -> PreStepDecision:
        if index == len(handlers):
            return Enter(current.messages)

        def call_next(next_step: PreStep | None = None, /) -> Awaitable[PreStepDecision]:
            return call(index + 1, current if next_step is None else next_step)

        decision = await handlers[index](current, call_next)
        if not isinstance(decision, Enter | Reject):
            raise TypeError(
                f"pre-step handler {index} returned {type(decision).__name__}, "
                "expected Enter or Reject"
            )
        return decision

    return await call(0, step)


__all__ = [
    "run_pre_step",
]
