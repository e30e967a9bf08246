"""Provider adapters: real models behind the :class:`~dsh_llm._request.ModelAdapter`
protocol.

Each adapter needs its provider's SDK, installed as an extra (``dsh-sdk[openai]``,
``dsh-sdk[anthropic]``, ``dsh-sdk[gemini]``). Nothing here imports an SDK until its
adapter is first used, so ``import dsh_llm.providers`` works without them.
``adapter_for("openai:gpt-4.1")`` builds the adapter a model string names.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from dsh_llm.providers._fallback import FallbackAdapter
from dsh_llm.providers._model_string import adapter_for

if TYPE_CHECKING:
    from dsh_llm.providers._anthropic import AnthropicAdapter
    from dsh_llm.providers._gemini import GeminiAdapter
    from dsh_llm.providers._openai import OpenAIChatAdapter
    from dsh_llm.providers._openai_responses import OpenAIResponsesAdapter

__all__ = [
    "AnthropicAdapter",
    "FallbackAdapter",
    "GeminiAdapter",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
    "adapter_for",
]

_HOMES = {
    "AnthropicAdapter": "dsh_llm.providers._anthropic",
    "GeminiAdapter": "dsh_llm.providers._gemini",
    "OpenAIChatAdapter": "dsh_llm.providers._openai",
    "OpenAIResponsesAdapter": "dsh_llm.providers._openai_responses",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home), name)
