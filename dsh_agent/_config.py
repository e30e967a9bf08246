"""An agent loop's options as one frozen value: :class:`AgentConfig`.

``AgentLoop(session=..., adapter=..., ...)`` builds one from its keywords and keeps it;
``AgentLoop.from_config(session=..., config=...)`` takes one as it is, and ``edit()``
builds its branch from the loop's own (with the pre-step handlers added since). The
session is not part of it: a configuration can drive any number of sessions, one loop
each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from dsh_agent._agent import PreStepHandler
from dsh_agent._model_settings import ModelSettings
from dsh_agent.approvals._policy import ApprovalPolicy
from dsh_agent.compaction._config import Compaction
from dsh_agent.retry._policy import RetryPolicy
from dsh_agent.tools import Tool
from dsh_llm._request import ModelAdapter

if TYPE_CHECKING:
    from dsh_session.stores import SessionStore

DEFAULT_RETRY = RetryPolicy()
"""Retries are on unless ``retry=None``: 5, from 500 ms to 10 s, 10 % jitter."""

NO_SETTINGS = ModelSettings()
"""Every sampling setting left to the provider's default."""

DepsT = TypeVar("DepsT")


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentConfig(Generic[DepsT]):
    """What an agent loop is built with, besides its session. ``tools`` and
    ``pre_step`` are kept as tuples; mypy checks ``deps`` against the
    ``ToolContext[Deps]`` the tools declare."""

    adapter: ModelAdapter
    """The model adapter every request goes through."""
    provider: str
    model: str
    system: str | None = None
    """The system prompt, logged in the request header."""
    tools: Sequence[Tool[DepsT]] = ()
    model_settings: ModelSettings = NO_SETTINGS
    """Sampling settings for the request header; ``run(..., settings=...)`` overrides
    them for one run."""
    store: SessionStore | None = None
    """Attached to the session and flushed at every checkpoint."""
    check_requests: bool = False
    """Compare each live request with its reconstruction from the log first."""
    retry: RetryPolicy | None = DEFAULT_RETRY
    """Which failed model attempts are tried again, logged (``None``: none)."""
    context_window: int | None = None
    """Logged as ``request/context`` (default: ``KNOWN_CONTEXT_WINDOWS[model]``)."""
    compaction: Compaction | None = None
    """Keeps the requests below the context window."""
    approval: ApprovalPolicy | None = None
    """Asks about more calls than the tools that declare ``requires_approval``."""
    deps: DepsT | None = None
    """Reaches every tool as ``ToolContext.deps``."""
    pre_step: Sequence[PreStepHandler] = ()
    """Pre-step handlers the loop starts with (the first is the outermost);
    ``on_pre_step`` adds more."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", tuple(self.tools))
        object.__setattr__(self, "pre_step", tuple(self.pre_step))


__all__ = [
    "DEFAULT_RETRY",
    "NO_SETTINGS",
    "AgentConfig",
]
