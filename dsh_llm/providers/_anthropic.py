"""Adapter for the Anthropic Messages API, built on the official ``anthropic`` package.

Install with ``pip install 'dsh-sdk[anthropic]'``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, cast

try:
    import anthropic
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "AnthropicAdapter needs the 'anthropic' package: pip install 'dsh-sdk[anthropic]'"
    ) from error

from dsh_llm._attachments import read_request_attachments
from dsh_llm._frozen_json import freeze_json, thaw_json
from dsh_llm._request import GenerateRequest
from dsh_llm._stream import StreamChunk
from dsh_llm.providers._anthropic_stream import MessagesStreamTranslator
from dsh_llm.providers._anthropic_wire import messages_body
from dsh_llm.providers._client_options import chosen_base_url, client_timeout
from dsh_llm.providers._endpoint import endpoint_url
from dsh_llm.providers._errors import SdkErrors
from dsh_llm.providers._keys import resolve_api_key
from dsh_llm.providers._streaming import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_FIRST_CHUNK_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    SdkStream,
    StreamTimeouts,
)

if TYPE_CHECKING:
    from anthropic.types import MessageParam, RawMessageStreamEvent

ANTHROPIC_ERRORS = SdkErrors(
    status=anthropic.APIStatusError,
    timeout=anthropic.APITimeoutError,
    connection=anthropic.APIConnectionError,
    api=anthropic.APIError,
)

DEFAULT_MAX_TOKENS = 4096
"""Sent when a request sets no ``max_tokens``: the Messages API requires one."""


class AnthropicAdapter:
    """A :class:`~dsh_llm._request.ModelAdapter` over streaming ``/v1/messages``.

    Pass a configured ``anthropic.AsyncAnthropic`` as ``client``, or let the adapter
    build one from ``base_url`` and ``api_key`` (default: ``ANTHROPIC_API_KEY``). A
    server on this machine (``base_url`` on 127.0.0.0/8, ``localhost`` or ``::1``)
    needs no key; for any other endpoint a missing key raises
    :class:`~dsh_llm.errors.MissingApiKeyError` naming ``ANTHROPIC_API_KEY``.
    ``adapter.provider`` is ``"anthropic"``; ``model`` (kept as ``adapter.model``) is
    the model an ``AgentLoop`` built without ``model=`` asks for.

    ``thinking`` is sent as the API's ``thinking`` configuration on every request,
    e.g. ``{"type": "enabled", "budget_tokens": 2048}``. Thinking blocks come back as
    reasoning blocks; their signatures (and redacted thinking) ride in the
    assistant message's replay state and are sent back verbatim to the same model.
    ``GenerateRequest.reasoning_effort`` becomes ``output_config.effort``.

    Retries: none by default (``max_retries=0``): every failure ends the stream in
    ``finish {error}`` and the caller decides; the agent loop's ``RetryPolicy``
    retries and logs each attempt. A positive ``max_retries`` lets the SDK retry a
    request that failed before streaming began, invisibly to the log.

    ``base_url`` (or ``ANTHROPIC_BASE_URL``) is checked here: one that is not an
    ``http://`` or ``https://`` URL with a host raises
    :class:`~dsh_llm.errors.BaseUrlError`. The timeouts are
    :class:`~dsh_llm.providers.OpenAIChatAdapter`'s: ``connect_timeout`` (default
    10 s), ``first_chunk_timeout`` (60 s), ``idle_timeout`` (120 s), ``None`` for no
    limit, and ``timeout`` for the SDK client's other network operations.
    """

    def __init__(
        self,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        max_retries: int = 0,
        timeout: float | None = None,
        connect_timeout: float | None = DEFAULT_CONNECT_TIMEOUT,
        first_chunk_timeout: float | None = DEFAULT_FIRST_CHUNK_TIMEOUT,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking: Mapping[str, Any] | None = None,
    ) -> None:
        timeouts = StreamTimeouts.checked(
            connect=connect_timeout, first_chunk=first_chunk_timeout, idle=idle_timeout
        )
        self.provider = "anthropic"
        self.model = model
        if client is None:
            url = chosen_base_url(base_url, "ANTHROPIC_BASE_URL")  # the SDK reads it too
            key = (
                None  # the SDK sends ANTHROPIC_AUTH_TOKEN as a bearer token instead
                if api_key is None and os.environ.get("ANTHROPIC_AUTH_TOKEN")
                else resolve_api_key(
                    api_key=api_key,
                    variable="ANTHROPIC_API_KEY",
                    base_url=url,
                    provider="anthropic",
                )
            )
            client = anthropic.AsyncAnthropic(
                base_url=url,
                api_key=key,
                max_retries=max_retries,
                timeout=client_timeout(
                    anthropic.Timeout,
                    anthropic.DEFAULT_TIMEOUT,
                    timeout=timeout,
                    connect_timeout=timeouts.connect,
                ),
            )
        else:
            timeouts = timeouts.for_callers_client()
        self._timeouts = timeouts
        self.client = client
        self._default_max_tokens = default_max_tokens
        # A detached copy, checked to be JSON now rather than on the first request.
        self._thinking: dict[str, Any] | None = (
            None if thinking is None else thaw_json(freeze_json(thinking))
        )

    def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        """Stream one message; failures end in ``finish {error}``."""
        return self._timeouts.stream(
            lambda: self._open(request),
            MessagesStreamTranslator(),
            ANTHROPIC_ERRORS,
            endpoint_url(self.client, "v1/messages"),
        )

    async def _open(self, request: GenerateRequest) -> SdkStream[RawMessageStreamEvent]:
        body = messages_body(
            request,
            default_max_tokens=self._default_max_tokens,
            thinking=self._thinking,
            attachments=await read_request_attachments(request.messages),
        )
        return await self.client.messages.create(
            model=request.model,
            max_tokens=body.max_tokens,
            messages=cast("list[MessageParam]", body.messages),
            stream=True,
            extra_body=body.options,
        )


__all__ = [
    "ANTHROPIC_ERRORS",
    "DEFAULT_MAX_TOKENS",
    "AnthropicAdapter",
]
