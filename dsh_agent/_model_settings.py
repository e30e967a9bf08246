"""Model settings: how the model samples, for a loop and for one run.

``AgentLoop(..., model_settings=ModelSettings(temperature=..., max_tokens=...))`` sets
the loop's defaults; ``run(agent, message, settings=ModelSettings(...))`` overrides some
of them for that run only. Settings live in the request header's config, so the
header logged before each step names them and ``reconstruct_requests`` reproduces
them; an override is logged as a ``request/header`` change and undone the same way
(see docs/decisions/2026-12-03-model-settings-in-the-header.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from dsh_llm._prompt_cache import PromptCache
from dsh_session.events import RequestConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSettings:
    """Sampling settings; ``None`` leaves a setting as it is (the loop's, or the
    provider's default). Values are checked when they reach a request config."""

    temperature: float | None = None
    top_p: float | None = None
    stop: tuple[str, ...] | None = None
    reasoning_effort: str | None = None
    max_tokens: int | None = None
    prompt_cache: PromptCache | None = None
    """Prompt caching controls (see :class:`dsh_llm.PromptCache`); it replaces the
    loop's as a whole, and ``PromptCache(breakpoints=())`` asks for no caching."""

    def __post_init__(self) -> None:
        if self.stop is not None:
            if isinstance(self.stop, str) or not isinstance(self.stop, Sequence):
                raise TypeError(f"stop must be a sequence of strings, not {self.stop!r}")
            object.__setattr__(self, "stop", tuple(self.stop))

    def given(self) -> dict[str, Any]:
        """The settings this value sets (the ones that are not ``None``)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return {name: value for name, value in values.items() if value is not None}

    def applied_to(self, config: RequestConfig) -> RequestConfig:
        """``config`` with these settings over it, validated like any config (a bad
        value raises ``ValidationError`` naming the field)."""
        given = self.given()
        if not given:
            return config
        return RequestConfig.model_validate({**dict(config), **given})


__all__ = [
    "ModelSettings",
]
