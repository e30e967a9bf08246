"""Provider adapters: real models behind the :class:`~dsh_llm._request.ModelAdapter`
protocol.

Each adapter needs its provider's SDK, installed as an extra (``dsh-sdk[openai]``,
``dsh-sdk[anthropic]``). Nothing here imports an SDK until its adapter is first used,
so ``import dsh_llm.providers`` works without them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_llm.providers._anthropic import AnthropicAdapter
    from dsh_llm.providers._openai import OpenAIChatAdapter

__all__ = ["AnthropicAdapter", "OpenAIChatAdapter"]

_HOMES = {
    "AnthropicAdapter": "dsh_llm.providers._anthropic",
    "OpenAIChatAdapter": "dsh_llm.providers._openai",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home), name)
