"""Dynamic instructions: a callable of the loop's (``AgentLoop(instructions=...)``)
that gives text for the system prompt of each request, from the request's context.

It is called before every model request, sync or async; its text is added to the
loop's system prompt in the request header, which the step logs when it changes, so
:func:`~dsh_agent.reconstruct_requests` reproduces every request without calling it
again (docs/decisions/2026-12-06-instructions-per-run.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeAlias, TypeVar

from dsh_session._session import Session

DepsT = TypeVar("DepsT")


@dataclass(frozen=True, slots=True, kw_only=True)
class InstructionsContext(Generic[DepsT]):
    """What dynamic instructions are given for one request."""

    session: Session
    """The session the request is for: its log and derived history so far."""
    turn: int
    """The number of the turn the request belongs to."""
    step: int
    """The step of that turn (1 for its first request)."""
    deps: DepsT
    """The loop's ``deps`` (what tools receive as ``ToolContext.deps``)."""


InstructionsFunction: TypeAlias = Callable[
    [InstructionsContext[DepsT]], "str | Awaitable[str | None] | None"
]
"""Dynamic instructions: text for one request's system prompt (``None`` or empty: none)."""


async def evaluate(
    instructions: InstructionsFunction[DepsT], context: InstructionsContext[DepsT]
) -> str | None:
    """The text ``instructions`` gives for ``context`` (awaited when it is async); a
    value that is not text raises ``TypeError`` naming its type."""
    text = instructions(context)
    if inspect.isawaitable(text):
        text = await text
    if text is not None and not isinstance(text, str):
        raise TypeError(f"dynamic instructions must return str or None, not {type(text).__name__}")
    return text or None


__all__ = [
    "InstructionsContext",
    "InstructionsFunction",
    "evaluate",
]
