"""An agent loop's options as one frozen value: :class:`AgentConfig`, and the keywords
that build one: :class:`LoopOptions`.

``AgentLoop(model=..., ...)`` and ``AgentLoop.open(store=..., session_id=..., ...)``
take the same keywords (one ``TypedDict``, so they cannot drift apart) and build a
configuration from them; ``AgentLoop.from_config(session=..., config=...)`` takes one
as it is, and ``edit()`` builds its branch from the loop's own (with the pre-step
handlers added since). The session is not part of it: a configuration can drive any
number of sessions, one loop each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar, cast

from dsh_agent._agent import PreStepHandler
from dsh_agent._instructions import InstructionsFunction
from dsh_agent._model_settings import ModelSettings
from dsh_agent._usage import UsageLimits
from dsh_agent.approvals._policy import ApprovalPolicy
from dsh_agent.compaction._config import Compaction
from dsh_agent.retry._policy import RetryPolicy
from dsh_agent.tools import Tool
from dsh_llm._request import ModelAdapter
from dsh_llm.errors import ModelStringError
from dsh_llm.providers import adapter_for

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
    instructions: InstructionsFunction[DepsT] | None = None
    """Dynamic instructions: called before each request with its
    :class:`~dsh_agent.InstructionsContext`, sync or async; the text is added to the
    system prompt of that request's header (logged, so never called again to rebuild it)."""
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
    usage_limits: UsageLimits | None = None
    """What one turn may spend, checked before each request and each tool call batch."""
    session_usage_limits: UsageLimits | None = None
    """What the whole session may spend (its log, earlier processes included)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", tuple(self.tools))
        object.__setattr__(self, "pre_step", tuple(self.pre_step))


class LoopOptions(TypedDict, Generic[DepsT], total=False):
    """The keywords of ``AgentLoop(...)`` and ``AgentLoop.open(...)`` besides the
    session and the store; each is the :class:`AgentConfig` field of that name.
    Name the model once: ``model="openai:gpt-4.1"`` (a model string) builds the
    adapter; ``adapter=adapter`` takes ``provider`` and ``model`` from the adapter;
    given explicitly beside an adapter, ``provider`` and ``model`` win."""

    adapter: ModelAdapter | None
    provider: str | None
    model: str | None
    system: str | None
    instructions: InstructionsFunction[DepsT] | None
    tools: Iterable[Tool[DepsT]]
    model_settings: ModelSettings
    check_requests: bool
    retry: RetryPolicy | None
    context_window: int | None
    compaction: Compaction | None
    approval: ApprovalPolicy | None
    deps: DepsT | None
    pre_step: Iterable[PreStepHandler]
    usage_limits: UsageLimits | None
    session_usage_limits: UsageLimits | None


_MODEL_KEYS = ("adapter", "provider", "model")


def loop_config(
    options: LoopOptions[DepsT], store: SessionStore | None, caller: str
) -> AgentConfig[DepsT]:
    """The configuration ``caller`` (``AgentLoop()``, ``AgentLoop.open()``) builds from
    its keywords; an unknown one is a ``TypeError`` naming it, as Python's own is."""
    unknown = sorted(set(options) - set(LoopOptions.__annotations__))
    if unknown:
        hint = (
            ": resuming loads the log, which takes an await; use "
            "`async with AgentLoop.open(store=..., session_id=..., ...)`"
            if "session_id" in unknown and caller == "AgentLoop()"
            else ""
        )
        raise TypeError(f"{caller} got unexpected keyword arguments: {', '.join(unknown)}{hint}")
    adapter, provider, model = choose_model(
        options.get("adapter"), options.get("provider"), options.get("model")
    )
    rest = {key: value for key, value in options.items() if key not in _MODEL_KEYS}
    return AgentConfig(
        adapter=adapter, provider=provider, model=model, store=store, **cast(Any, rest)
    )


def choose_model(
    adapter: ModelAdapter | None, provider: str | None, model: str | None
) -> tuple[ModelAdapter, str, str]:
    """The adapter and the request header's provider and model of a loop built with
    these keywords.

    Without an adapter, ``model`` is a model string (``"openai:gpt-4.1"``, see
    :func:`dsh_llm.providers.adapter_for`) that builds one. With an adapter,
    ``provider`` and ``model`` default to the adapter's own ``provider`` and
    ``model`` attributes; given explicitly, they win (the adapter sends each
    request's model, so they are what reaches the wire and the log). Neither way
    known is a :class:`~dsh_llm.errors.ModelStringError`."""
    if adapter is None:
        if model is None:
            raise ModelStringError(
                "AgentLoop needs a model: pass model='provider:model' (e.g. "
                "'openai:gpt-4.1', 'deepseek:deepseek-chat', "
                "'openai-compatible:NAME@http://127.0.0.1:8080/v1') or adapter=..."
            )
        adapter = adapter_for(model)
        model = None
    provider = provider if provider is not None else _attribute(adapter, "provider")
    model = model if model is not None else _attribute(adapter, "model")
    if provider is None or model is None:
        missing = [name for name, value in (("provider", provider), ("model", model)) if not value]
        raise ModelStringError(
            f"AgentLoop needs a {' and a '.join(missing)}: the adapter "
            f"{type(adapter).__name__} names none; pass "
            f"{' and '.join(name + '=...' for name in missing)} to AgentLoop, or build "
            "the adapter with model=... (or from a model string)"
        )
    return adapter, provider, model


def _attribute(adapter: ModelAdapter, name: str) -> str | None:
    value = getattr(adapter, name, None)
    return value if isinstance(value, str) and value else None


__all__ = [
    "DEFAULT_RETRY",
    "NO_SETTINGS",
    "AgentConfig",
    "LoopOptions",
    "choose_model",
    "loop_config",
]
