"""Adapter for OpenAI chat completions and the servers that speak it (DeepSeek,
OpenAI, vLLM, Ollama, ...), built on the official ``openai`` package.

Install with ``pip install 'dsh-sdk[openai]'``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, cast

try:
    import openai
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "OpenAIChatAdapter needs the 'openai' package: pip install 'dsh-sdk[openai]'"
    ) from error

from dsh_llm._attachments import read_request_attachments
from dsh_llm._request import GenerateRequest
from dsh_llm._stream import StreamChunk
from dsh_llm.providers._openai_client import OpenAIConnection
from dsh_llm.providers._openai_stream import ChatStreamTranslator
from dsh_llm.providers._openai_wire import MaxTokensField, chat_body
from dsh_llm.providers._streaming import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_FIRST_CHUNK_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    SdkStream,
)

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam


class OpenAIChatAdapter:
    """A :class:`~dsh_llm._request.ModelAdapter` over ``/chat/completions`` streaming.

    Pass a configured ``openai.AsyncOpenAI`` as ``client``, or let the adapter build
    one from ``base_url`` and ``api_key``. For the known providers (``openai``,
    ``deepseek``) both default: ``OpenAIChatAdapter(provider="deepseek")`` talks to
    DeepSeek with the key in ``DEEPSEEK_API_KEY``. ``provider`` only picks these
    defaults (kept as ``adapter.provider``); requests name their own provider.
    ``model`` (kept as ``adapter.model``) is the model an ``AgentLoop`` built without
    ``model=`` asks for; the wire carries each request's own model.

    Keys: ``api_key``, else the provider's variable (``OPENAI_API_KEY``,
    ``DEEPSEEK_API_KEY``; ``OPENAI_API_KEY`` for a ``base_url`` of your own). A server
    on this machine (``base_url`` on 127.0.0.0/8, ``localhost`` or ``::1``) needs none
    (a placeholder is sent); for any other endpoint a missing key raises
    :class:`~dsh_llm.errors.MissingApiKeyError` naming the variable, here, not at
    the first request.

    Retries: none by default (``max_retries=0``): every failure ends the stream in
    ``finish {error}`` and the caller decides; the agent loop's ``RetryPolicy``
    retries and logs each attempt. A positive ``max_retries`` lets the SDK retry a
    request that failed before streaming began, invisibly to the log.

    ``max_tokens_field`` names the wire field for ``GenerateRequest.max_tokens``:
    ``max_tokens`` (DeepSeek, vLLM, Ollama) or ``max_completion_tokens`` (OpenAI's
    reasoning models refuse the older name).

    ``base_url`` (or ``OPENAI_BASE_URL`` / ``DEEPSEEK_BASE_URL`` for those providers)
    is checked here: one that is not an ``http://`` or ``https://`` URL with a host raises
    :class:`~dsh_llm.errors.BaseUrlError`.

    Timeouts (seconds; ``None`` for no limit), each ending the call in ``TIMEOUT``
    with a message naming the URL and the argument: ``connect_timeout`` (default
    10) bounds opening the connection, TLS included; ``first_chunk_timeout``
    (default 60) the wait from sending the request to the response's first data;
    ``idle_timeout`` (default 120) each wait for data once the response has begun
    (keep-alive comments and pings are not data). ``timeout`` is the SDK client's
    timeout for every other network operation (the SDK's default when ``None``).
    ``connect_timeout``, ``timeout``, ``base_url``, ``api_key`` and ``max_retries``
    configure the client the adapter builds; a ``client`` of your own keeps its
    settings.
    """

    def __init__(
        self,
        *,
        client: openai.AsyncOpenAI | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: str = "openai",
        model: str | None = None,
        max_retries: int = 0,
        timeout: float | None = None,
        connect_timeout: float | None = DEFAULT_CONNECT_TIMEOUT,
        first_chunk_timeout: float | None = DEFAULT_FIRST_CHUNK_TIMEOUT,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        max_tokens_field: MaxTokensField = "max_tokens",
    ) -> None:
        self._connection = OpenAIConnection.build(
            client=client,
            provider=provider,
            base_url=base_url,
            api_key=api_key,
            max_retries=max_retries,
            timeout=timeout,
            connect_timeout=connect_timeout,
            first_chunk_timeout=first_chunk_timeout,
            idle_timeout=idle_timeout,
        )
        self.client = self._connection.client
        self.provider = provider
        self.model = model
        self._max_tokens_field: MaxTokensField = max_tokens_field

    def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        """Stream one completion; failures end in ``finish {error}``."""
        return self._connection.stream(
            lambda: self._open(request), ChatStreamTranslator(), "chat/completions"
        )

    async def _open(self, request: GenerateRequest) -> SdkStream[ChatCompletionChunk]:
        attachments = await read_request_attachments(request.messages)
        body = chat_body(request, max_tokens_field=self._max_tokens_field, attachments=attachments)
        return await self.client.chat.completions.create(
            model=request.model,
            messages=cast("list[ChatCompletionMessageParam]", body.messages),
            stream=True,
            stream_options={"include_usage": True},
            extra_body=body.options,
        )


__all__ = [
    "OpenAIChatAdapter",
]
