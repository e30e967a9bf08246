"""Anthropic ``cache_control`` markers for a request's :class:`PromptCache`.

Anthropic caches the prompt up to each marked block, in its order: tools, then
system, then messages. Each breakpoint the request names marks one block (the last
tool definition, the system prompt, the last block of the last message), so a
request carries at most three markers, within the API's limit of four. Thinking
blocks cannot carry a marker: the last message's last other block gets it.
"""

from __future__ import annotations

from typing import Any

from dsh_llm._prompt_cache import CacheRetention, PromptCache

CACHE_TTL: dict[CacheRetention, str] = {"short": "5m", "long": "1h"}
"""The ``ttl`` of a marker for each retention (absent: Anthropic's default, 5m)."""

_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def mark_cache_breakpoints(
    cache: PromptCache | None, options: dict[str, Any], turns: list[dict[str, Any]]
) -> None:
    """Add the markers ``cache`` names to the body's ``options`` and ``turns``, in
    place. A breakpoint on a part the request does not have marks nothing."""
    if cache is None or not cache.breakpoints:
        return
    marker: dict[str, str] = {"type": "ephemeral"}
    if cache.retention is not None:
        marker["ttl"] = CACHE_TTL[cache.retention]
    if "tools" in cache.breakpoints and options.get("tools"):
        options["tools"][-1]["cache_control"] = dict(marker)
    if "system" in cache.breakpoints and options.get("system"):
        text = options["system"]
        options["system"] = [{"type": "text", "text": text, "cache_control": dict(marker)}]
    if "history" in cache.breakpoints and turns:
        markable = [b for b in turns[-1]["content"] if b["type"] not in _UNMARKABLE]
        if markable:
            markable[-1]["cache_control"] = dict(marker)


__all__ = [
    "CACHE_TTL",
    "mark_cache_breakpoints",
]
