"""The context a tool handler may ask for, generic in the agent's dependencies.

``ToolContext[Deps]`` carries the call's identity, the turn's cancellation flag and the
``deps`` value given to ``AgentLoop(deps=...)``. It is covariant in ``Deps`` and tools
are contravariant in it, so mypy refuses a loop whose ``deps`` is not what its tools
declare (see docs/decisions/2026-12-03-typed-tool-dependencies.md).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Generic

from typing_extensions import TypeVar

from dsh_llm._ids import CallId

DepsT_co = TypeVar("DepsT_co", covariant=True, default=Any)
_NO_DEPS: Any = None


@dataclass(frozen=True, slots=True)
class ToolContext(Generic[DepsT_co]):
    """What a handler may learn about the call it serves, when it declares a second
    parameter. Cancellation is cooperative: ``cancelled`` is set when the turn is
    cancelled, and the handler decides whether to stop."""

    call_id: CallId
    turn: int
    step: int
    cancelled: asyncio.Event
    """Set when the turn is cancelled; a handler that stops because of it gets a
    ``TOOL_CANCELLED`` result."""
    deps: DepsT_co = _NO_DEPS
    """The loop's ``deps`` (``None`` when it was given none)."""
    agent: object = None
    """The agent running the call (an ``AgentLoop``; e.g. the parent a sub-agent tool
    delegates from), ``None`` outside a loop. Typed ``object`` because tools are
    defined below the agent in the import graph; narrow it with ``isinstance``."""
    session_id: str | None = None
    """The session whose log holds the call (``None`` outside a loop); tools that
    read that log (:func:`~dsh_agent.recall_tool`) look it up by this id."""

    @property
    def idempotency_key(self) -> str:
        """The same key every time this call runs, derived from its id: a handler passes
        it to the service it changes, so that a call run again after a crash (a tool
        declared idempotent to :class:`dsh_agent.temporal.TemporalAgent`) takes effect
        once."""
        return f"dsh-tool-call-{self.call_id}"


__all__ = [
    "ToolContext",
]
