"""What every runner of one agent loop shares, as one immutable value, and the kind of
a turn.

:class:`EngineContext` is built once per loop (:mod:`dsh_agent._engine.loop_parts`) and
handed to the tool runner, the step runner, the turn runner and the driver, which take
it plus their own few options instead of each being wired with the same collaborators.
None of its members holds the loop: ``agent`` is a weak reference, and the callbacks
close over the loop's lists and flag (docs/decisions/2026-12-04-agent-loop-lifetime.md).

:data:`TurnKind` says how a turn starts and what its first step does, as one value
(docs/decisions/2026-12-04-engine-by-concept.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from dsh_agent._agent import Agent, PreStepHandler
from dsh_agent._cancellation import CancelScope
from dsh_agent._engine.usage_guard import UsageGuard
from dsh_agent._live_updates import LiveUpdate
from dsh_agent.approvals._gate import ApprovalGate
from dsh_agent.compaction._hook import ContextHook
from dsh_agent.inbox import Inbox
from dsh_agent.retry._chain import RetryTarget
from dsh_agent.retry._scheduler import RetryScheduler
from dsh_llm._attachments import AttachmentReader
from dsh_session._session import Session

Checkpoint = Callable[[CancelScope], Awaitable[None]]
"""Makes the log durable so far (a no-op without a store)."""
Prelude = Callable[[int, int], None]
"""Called with the turn and step right after ``step/start``, before the step's input is
logged: e.g. regenerate's surface replace (:mod:`dsh_agent._engine.branching`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineContext:
    """The session one loop drives and the collaborators all its runners share."""

    session: Session
    inbox: Inbox
    checkpoint: Checkpoint
    notify: Callable[[LiveUpdate], None]
    """Delivers a live update to the loop's observers."""
    approvals: ApprovalGate
    window: ContextHook
    """Route metadata and compaction: what keeps requests inside the context window."""
    retries: RetryScheduler | None
    """``None`` when the loop makes one attempt per step."""
    deps: object
    """What tools receive as ``ToolContext.deps``."""
    pre_step_handlers: Sequence[PreStepHandler]
    """The loop's own list, read at each step (handlers added later take part)."""
    agent: Callable[[], Agent | None]
    """The loop, through a weak reference: the driver holds it while a turn runs."""
    closed: Callable[[], bool]
    """Whether the loop was closed."""
    usage: UsageGuard | None = None
    """``None`` when the loop has no usage limits."""
    attachments: AttachmentReader | None = None
    """Where adapters read attachment bytes during a turn: the loop's store."""


# --- the kind of a turn -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fresh:
    """A turn for new input: it claims the first step's input and, with none, ends
    ``completed`` without asking the model."""


@dataclass(frozen=True, slots=True)
class Rerun:
    """``agent.retry()``: the failed last turn again over the same history. It claims
    no input, asks the model anyway, and its retry sequence keeps ``target``'s budget."""

    target: RetryTarget


@dataclass(frozen=True, slots=True)
class Regenerate:
    """``agent.regenerate()``: ``prelude`` runs at the start of the first step, which
    asks the model even with no new input."""

    prelude: Prelude


@dataclass(frozen=True, slots=True)
class Resume:
    """A turn left open waiting for approval goes on with the tool phase of ``step``
    (it was opened before; nothing is claimed)."""

    step: int


TurnKind: TypeAlias = Fresh | Rerun | Regenerate | Resume
FRESH = Fresh()

__all__ = [
    "FRESH",
    "Checkpoint",
    "EngineContext",
    "Fresh",
    "Prelude",
    "Regenerate",
    "Rerun",
    "Resume",
    "TurnKind",
]
