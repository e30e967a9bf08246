"""The ``openai`` SDK client both OpenAI adapters build (chat completions and
Responses): which endpoint and key a provider name implies, checked, with dsh's
timeouts; and :class:`OpenAIConnection`, the client with those timeouts that both
adapters stream through.

Install with ``pip install 'dsh-sdk[openai]'``.
"""

from __future__ import annotations

try:
    import openai
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the OpenAI adapters need the 'openai' package: pip install 'dsh-sdk[openai]'"
    ) from error

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from dsh_llm._stream import StreamChunk
from dsh_llm.providers._client_options import chosen_base_url, client_timeout
from dsh_llm.providers._endpoint import endpoint_url
from dsh_llm.providers._errors import SdkErrors
from dsh_llm.providers._keys import resolve_api_key
from dsh_llm.providers._streaming import EventTranslator, SdkStream, StreamTimeouts

OPENAI_ERRORS = SdkErrors(
    status=openai.APIStatusError,
    timeout=openai.APITimeoutError,
    connection=openai.APIConnectionError,
    api=openai.APIError,
)

KNOWN_PROVIDERS: dict[str, tuple[str | None, str]] = {
    "openai": (None, "OPENAI_API_KEY"),
    "deepseek": ("https://api.deepseek.com", "DEEPSEEK_API_KEY"),
}
"""Providers whose endpoint and API-key variable need no configuration:
``provider -> (base_url, environment variable)``. ``None`` is the SDK's default."""

BASE_URL_VARIABLES = {"openai": "OPENAI_BASE_URL", "deepseek": "DEEPSEEK_BASE_URL"}
"""Where a known provider's endpoint may be moved without code (a proxy, a local
stand-in): read when no ``base_url`` is given."""

OTHER_KEY_VARIABLE = "OPENAI_API_KEY"
"""Where the key of any other provider (a ``base_url`` of your own) is read from: the
variable the ``openai`` package itself falls back to."""


def openai_client(
    *,
    provider: str,
    base_url: str | None,
    api_key: str | None,
    max_retries: int,
    timeout: float | None,
    connect_timeout: float | None,
) -> openai.AsyncOpenAI:
    """The client for ``provider``: its known endpoint and key variable, or
    ``base_url`` (required for any other provider name) and ``OPENAI_API_KEY``.
    Raises ``ValueError`` for an unknown provider without a ``base_url``,
    :class:`~dsh_llm.errors.BaseUrlError` for an unusable URL and
    :class:`~dsh_llm.errors.MissingApiKeyError` for a remote endpoint without a key."""
    known = KNOWN_PROVIDERS.get(provider)
    if known is None and base_url is None:
        raise ValueError(
            f"provider {provider!r} has no known endpoint: pass base_url "
            f"(known providers: {', '.join(sorted(KNOWN_PROVIDERS))})"
        )
    default_url, key_variable = known or (None, OTHER_KEY_VARIABLE)
    variable = BASE_URL_VARIABLES.get(provider)
    url = (
        chosen_base_url(base_url, variable) or default_url
        if variable is not None
        else chosen_base_url(base_url, "OPENAI_BASE_URL")  # the SDK reads it too
    )
    return openai.AsyncOpenAI(
        base_url=url,
        api_key=resolve_api_key(
            api_key=api_key, variable=key_variable, base_url=url, provider=provider
        ),
        max_retries=max_retries,
        timeout=client_timeout(
            openai.Timeout,
            openai.DEFAULT_TIMEOUT,
            timeout=timeout,
            connect_timeout=connect_timeout,
        ),
    )


@dataclass(frozen=True, slots=True)
class OpenAIConnection:
    """An OpenAI adapter's client and dsh's timeouts (checked), and how one of its
    calls streams: the same for chat completions and Responses."""

    client: openai.AsyncOpenAI
    timeouts: StreamTimeouts

    @classmethod
    def build(
        cls,
        *,
        client: openai.AsyncOpenAI | None,
        provider: str,
        base_url: str | None,
        api_key: str | None,
        max_retries: int,
        timeout: float | None,
        connect_timeout: float | None,
        first_chunk_timeout: float | None,
        idle_timeout: float | None,
    ) -> OpenAIConnection:
        """The caller's ``client``, or one built by :func:`openai_client`."""
        timeouts = StreamTimeouts.checked(
            connect=connect_timeout, first_chunk=first_chunk_timeout, idle=idle_timeout
        )
        if client is not None:
            return cls(client, timeouts.for_callers_client())
        built = openai_client(
            provider=provider,
            base_url=base_url,
            api_key=api_key,
            max_retries=max_retries,
            timeout=timeout,
            connect_timeout=timeouts.connect,
        )
        return cls(built, timeouts)

    def stream(
        self,
        open_call: Callable[[], Awaitable[SdkStream[Any]]],
        translator: EventTranslator[Any],
        path: str,
    ) -> AsyncIterator[StreamChunk]:
        """One call to ``path`` (``"chat/completions"``, ``"responses"``), opened by
        ``open_call``; failures end in ``finish {error}``."""
        return self.timeouts.stream(
            open_call, translator, OPENAI_ERRORS, endpoint_url(self.client, path)
        )


__all__ = [
    "BASE_URL_VARIABLES",
    "KNOWN_PROVIDERS",
    "OPENAI_ERRORS",
    "OTHER_KEY_VARIABLE",
    "OpenAIConnection",
    "openai_client",
]
