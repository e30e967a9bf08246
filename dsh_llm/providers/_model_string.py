"""Model strings: ``"provider:model"`` names the model once and builds its adapter.

Accepted forms::

    openai:MODEL                      OpenAI (OPENAI_API_KEY)
    openai-responses:MODEL            OpenAI through the Responses API (OPENAI_API_KEY);
                                      requests name the provider "openai"
    deepseek:MODEL                    DeepSeek (DEEPSEEK_API_KEY)
    anthropic:MODEL                   Anthropic (ANTHROPIC_API_KEY)
    gemini:MODEL                      Google Gemini (GEMINI_API_KEY or GOOGLE_API_KEY)
    ollama:MODEL                      Ollama's OpenAI-compatible /v1 at OLLAMA_HOST
                                      (default http://127.0.0.1:11434; no key)
    openai-compatible:MODEL@BASE_URL  any chat-completions server, e.g.
                                      "openai-compatible:qwen3@http://127.0.0.1:8080/v1"

The text after the first ``:`` is the model (it may hold colons itself, as Ollama's
``llama3:8b`` does); for ``openai-compatible`` the base URL follows the first ``@``.
The provider's SDK is imported only when the adapter is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_llm.errors import ModelStringError
from dsh_llm.providers._endpoint import base_url_problem, shown_value
from dsh_llm.providers._ollama import ollama_api_key, ollama_base_url

if TYPE_CHECKING:
    from dsh_llm.providers._anthropic import AnthropicAdapter
    from dsh_llm.providers._gemini import GeminiAdapter
    from dsh_llm.providers._openai import OpenAIChatAdapter
    from dsh_llm.providers._openai_responses import OpenAIResponsesAdapter

MODEL_STRING_FORMS = (
    "openai:MODEL",
    "openai-responses:MODEL",
    "deepseek:MODEL",
    "anthropic:MODEL",
    "gemini:MODEL",
    "ollama:MODEL",
    "openai-compatible:MODEL@BASE_URL",
)
"""The forms :func:`parse_model_string` accepts, as the errors list them."""


@dataclass(frozen=True, slots=True)
class ModelString:
    """A parsed model string: the provider named in request headers, the model, and
    the base URL (``openai-compatible`` only)."""

    provider: str
    model: str
    base_url: str | None = None


def _refuse(text: str, why: str) -> ModelStringError:
    forms = ", ".join(repr(form) for form in MODEL_STRING_FORMS)
    return ModelStringError(f"model string {text!r}: {why}; accepted forms: {forms}")


def parse_model_string(text: str) -> ModelString:
    """Split ``text`` into provider, model and base URL, or raise
    :class:`~dsh_llm.errors.ModelStringError` naming the accepted forms."""
    if not isinstance(text, str):
        raise _refuse(repr(text), f"a model string is a str, not {type(text).__name__}")
    prefix, colon, rest = text.partition(":")
    if not colon or not prefix:
        raise _refuse(text, "no provider prefix")
    if prefix in ("openai", "openai-responses", "deepseek", "anthropic", "gemini", "ollama"):
        if not rest.strip() or rest != rest.strip():
            raise _refuse(text, "no model name after the provider")
        return ModelString(prefix, rest)
    if prefix == "openai-compatible":
        model, at, base_url = rest.partition("@")
        if not at:
            raise _refuse(text, "openai-compatible needs MODEL@BASE_URL")
        if not model.strip() or model != model.strip():
            raise _refuse(text, "no model name before '@'")
        problem = base_url_problem(base_url)
        if problem is not None:
            raise _refuse(text, f"base URL {shown_value(base_url)} is not usable: {problem}")
        return ModelString(prefix, model, base_url)
    raise _refuse(text, f"unknown provider {prefix!r}")


def adapter_for(
    model: str, **options: Any
) -> OpenAIChatAdapter | OpenAIResponsesAdapter | AnthropicAdapter | GeminiAdapter:
    """The adapter a model string names, with ``adapter.provider`` and
    ``adapter.model`` set from it; ``options`` go to the adapter's constructor
    (``api_key``, ``timeout``, ``first_chunk_timeout``, ...).

    ``adapter_for("deepseek:deepseek-chat")``, ``adapter_for("openai:gpt-4.1")``,
    ``adapter_for("openai-responses:gpt-5")`` (provider ``"openai"``),
    ``adapter_for("anthropic:claude-sonnet-4-5")``, ``adapter_for("gemini:gemini-2.5-flash")``,
    ``adapter_for("ollama:llama3.2")``,
    ``adapter_for("openai-compatible:qwen3@http://127.0.0.1:8080/v1")``. A malformed
    string or an unknown provider raises :class:`~dsh_llm.errors.ModelStringError`;
    a missing key for a remote endpoint
    :class:`~dsh_llm.errors.MissingApiKeyError`."""
    parsed = parse_model_string(model)
    if parsed.provider == "anthropic":
        from dsh_llm.providers._anthropic import AnthropicAdapter

        return AnthropicAdapter(model=parsed.model, **options)
    if parsed.provider == "openai-responses":
        from dsh_llm.providers._openai_responses import OpenAIResponsesAdapter

        return OpenAIResponsesAdapter(model=parsed.model, **options)
    if parsed.provider == "gemini":
        from dsh_llm.providers._gemini import GeminiAdapter

        return GeminiAdapter(model=parsed.model, **options)
    from dsh_llm.providers._openai import OpenAIChatAdapter

    if parsed.provider == "ollama":
        options = {"base_url": ollama_base_url(), "api_key": ollama_api_key(), **options}

    if parsed.base_url is not None:
        options = {**options, "base_url": parsed.base_url}
    return OpenAIChatAdapter(provider=parsed.provider, model=parsed.model, **options)


__all__ = ["MODEL_STRING_FORMS", "ModelString", "adapter_for", "parse_model_string"]
