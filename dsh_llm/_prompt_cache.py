"""Prompt caching controls: one provider-neutral value each adapter maps to its API.

It lives in the request (and so in the logged request header), not in an adapter's
options, so every request stays reconstructable from the log and a fallback to
another provider sends the same intent in that provider's form
(docs/decisions/2026-12-06-prompt-caching.md).
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import Field, field_validator

from dsh_llm._model import DshModel, optional

CacheBreakpoint: TypeAlias = Literal["tools", "system", "history"]
"""Where Anthropic gets a ``cache_control`` marker: the last tool definition, the
system prompt, the last block of the last message."""

CacheRetention: TypeAlias = Literal["short", "long"]
"""How long a cached prefix should live: Anthropic ``5m``/``1h``, OpenAI
``in_memory``/``24h``."""

DEFAULT_BREAKPOINTS: tuple[CacheBreakpoint, ...] = ("tools", "system", "history")
"""Every prefix an agent resends: its tools, its system prompt, its history so far.
Three markers, within the API's limit of four."""


class PromptCache(DshModel):
    """How a request asks the provider to cache its prompt prefix.

    ``key`` routes requests that share a prefix to one cache (OpenAI's
    ``prompt_cache_key``; Anthropic has none). ``retention`` asks for a lifetime
    (absent: the provider's default). ``breakpoints`` says where Anthropic's cache
    markers go (OpenAI caches prefixes without markers); ``()`` sets none."""

    key: str | None = optional(min_length=1)
    retention: CacheRetention | None = optional()
    breakpoints: tuple[CacheBreakpoint, ...] = Field(default=DEFAULT_BREAKPOINTS)

    @field_validator("breakpoints")
    @classmethod
    def _each_once(cls, value: tuple[CacheBreakpoint, ...]) -> tuple[CacheBreakpoint, ...]:
        if len(set(value)) != len(value):
            raise ValueError(f"each breakpoint may be named once, not {list(value)!r}")
        return value


__all__ = [
    "DEFAULT_BREAKPOINTS",
    "CacheBreakpoint",
    "CacheRetention",
    "PromptCache",
]
