"""Adapter for the Google Gemini API (``streamGenerateContent``), built on the
official ``google-genai`` package.

Install with ``pip install 'dsh-sdk[gemini]'``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

try:
    from google import genai
    from google.genai import errors as genai_errors
    from google.genai import types
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "GeminiAdapter needs the 'google-genai' package: pip install 'dsh-sdk[gemini]'"
    ) from error

from dsh_llm._attachments import read_request_attachments
from dsh_llm._frozen_json import freeze_json, thaw_json
from dsh_llm._request import GenerateRequest
from dsh_llm._stream import StreamChunk
from dsh_llm.providers._client_options import chosen_base_url
from dsh_llm.providers._endpoint import shown_url
from dsh_llm.providers._gemini_errors import GEMINI_ERRORS, classified
from dsh_llm.providers._gemini_http import RESPONSE_BEGAN, gemini_http_client
from dsh_llm.providers._gemini_stream import GenerateContentTranslator
from dsh_llm.providers._gemini_wire import gemini_body
from dsh_llm.providers._keys import resolve_api_key
from dsh_llm.providers._streaming import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_FIRST_CHUNK_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    StreamTimeouts,
    checked_timeout,
)

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
"""The API version in every request's path, as Google's REST documentation writes it
(pinned: the SDK's own default has changed between releases)."""
KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
"""Where the key is read from, in the SDK's order of precedence."""


class GeminiAdapter:
    """A :class:`~dsh_llm._request.ModelAdapter` over Gemini's streaming
    ``models/MODEL:streamGenerateContent``.

    Pass a configured ``google.genai.Client`` as ``client``, or let the adapter build
    one from ``base_url`` (else ``GOOGLE_GEMINI_BASE_URL``, else Google's endpoint)
    and ``api_key`` (else ``GOOGLE_API_KEY``, else ``GEMINI_API_KEY``). A server on
    this machine needs no key; for any other endpoint a missing key raises
    :class:`~dsh_llm.errors.MissingApiKeyError` naming ``GEMINI_API_KEY``.
    ``adapter.provider`` is ``"gemini"``; ``model`` (kept as ``adapter.model``) is
    the model an ``AgentLoop`` built without ``model=`` asks for.

    ``thinking`` is sent as the request's ``thinking_config`` (e.g.
    ``{"include_thoughts": True}`` to receive thought summaries, or
    ``{"thinking_budget": 1024}``); ``GenerateRequest.reasoning_effort`` (``minimal``,
    ``low``, ``medium``, ``high``) becomes its ``thinking_level``. Thought parts
    come back as reasoning blocks; thought signatures ride in the assistant
    message's replay state and are sent back to the same model.

    Retries: none by default (``max_retries=0``); a positive ``max_retries`` lets the
    SDK retry a request that failed before streaming began, invisibly to the log.
    The timeouts are :class:`~dsh_llm.providers.OpenAIChatAdapter`'s:
    ``connect_timeout`` (10 s), ``first_chunk_timeout`` (60 s), ``idle_timeout``
    (120 s), ``None`` for no limit, and ``timeout`` for every other network
    operation of the client the adapter builds (none by default, as in the SDK).
    """

    def __init__(
        self,
        *,
        client: genai.Client | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        max_retries: int = 0,
        timeout: float | None = None,
        connect_timeout: float | None = DEFAULT_CONNECT_TIMEOUT,
        first_chunk_timeout: float | None = DEFAULT_FIRST_CHUNK_TIMEOUT,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        thinking: Mapping[str, Any] | None = None,
    ) -> None:
        timeouts = StreamTimeouts.checked(
            connect=connect_timeout, first_chunk=first_chunk_timeout, idle=idle_timeout
        )
        timeout = checked_timeout("timeout", timeout)
        self.provider = "gemini"
        self.model = model
        self._base_url: str | None = None
        if client is None:
            url = chosen_base_url(base_url, "GOOGLE_GEMINI_BASE_URL") or DEFAULT_BASE_URL
            client = genai.Client(
                vertexai=False,
                api_key=resolve_api_key(
                    api_key=api_key or _key_from_environment(),
                    variable="GEMINI_API_KEY",
                    base_url=url,
                    provider="gemini",
                ),
                http_options=types.HttpOptions(
                    base_url=url,
                    api_version=API_VERSION,
                    retry_options=(
                        types.HttpRetryOptions(attempts=max_retries + 1)
                        if max_retries > 0
                        else None
                    ),
                    httpx_async_client=gemini_http_client(
                        connect_timeout=timeouts.connect, timeout=timeout
                    ),
                ),
            )
            self._base_url = url
        else:
            timeouts = timeouts.for_callers_client()
        self._timeouts = timeouts
        self.client = client
        self._thinking = None if thinking is None else _checked_thinking(thinking)

    def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        """Stream one response; failures end in ``finish {error}``."""
        return self._timeouts.stream(
            lambda: self._open(request),
            GenerateContentTranslator(),
            GEMINI_ERRORS,
            self._endpoint(request.model),
        )

    async def _open(self, request: GenerateRequest) -> _ResponseStream:
        """Send the request and wait until its response begins (see
        :class:`_ResponseStream`)."""
        attachments = await read_request_attachments(request.messages)
        body = gemini_body(request, thinking=self._thinking, attachments=attachments)
        chunks = await self.client.aio.models.generate_content_stream(
            model=request.model,
            contents=body.contents,
            config=types.GenerateContentConfig.model_validate(body.config),
        )
        stream = _ResponseStream(chunks)
        await stream.start()
        return stream

    def _endpoint(self, model: str) -> str:
        """The URL failures name. A client of the caller's own does not say where
        it sends (its settings are the SDK's private state)."""
        if self._base_url is None:
            return "<unknown URL>"
        path = f"{API_VERSION}/models/{model}:streamGenerateContent"
        return shown_url(f"{self._base_url.rstrip('/')}/{path}")


class _ResponseStream:
    """The SDK's chunks, with every ``APIError`` classified as it is raised.

    The SDK sends the request only when its stream is first read, and reads the
    first chunk in the same step. :meth:`start` takes that step in a task of its
    own and returns once the response has begun (its headers came, as the adapter's
    HTTP client tells) or failed: connecting and the status are the call's opening,
    as for the other adapters, and the wait for the first chunk is read with the
    stream (bounded by the idle timeout too)."""

    def __init__(self, chunks: AsyncIterator[types.GenerateContentResponse]) -> None:
        self._chunks = chunks
        self._first: asyncio.Task[types.GenerateContentResponse | None] | None = None

    async def start(self) -> None:
        began = asyncio.Event()
        token = RESPONSE_BEGAN.set(began)
        try:
            first = asyncio.ensure_future(self._next())  # runs with RESPONSE_BEGAN set
        finally:
            RESPONSE_BEGAN.reset(token)
        self._first = first
        waiting = asyncio.ensure_future(began.wait())
        try:
            await asyncio.wait({first, waiting}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            first.cancel()
            raise
        finally:
            waiting.cancel()
        if first.done():
            first.result()  # a failure to connect or an error status is the opening's

    def __aiter__(self) -> AsyncIterator[types.GenerateContentResponse]:
        return self._all()

    async def close(self) -> None:
        if self._first is not None and not self._first.done():
            self._first.cancel()
            await asyncio.gather(self._first, return_exceptions=True)
        aclose = getattr(self._chunks, "aclose", None)
        if aclose is not None:
            await aclose()

    async def _all(self) -> AsyncIterator[types.GenerateContentResponse]:
        chunk = await (self._first if self._first is not None else self._next())
        while chunk is not None:
            yield chunk
            chunk = await self._next()

    async def _next(self) -> types.GenerateContentResponse | None:
        try:
            return await anext(self._chunks, None)
        except genai_errors.APIError as error:
            raise classified(error) from error


def _checked_thinking(thinking: Mapping[str, Any]) -> dict[str, Any]:
    """A detached copy of ``thinking``, checked now against the SDK's
    ``ThinkingConfig`` rather than failing the first request."""
    copy: dict[str, Any] = thaw_json(freeze_json(thinking))
    try:
        types.ThinkingConfig.model_validate(copy)
    except ValueError as error:
        raise ValueError(
            f"thinking={thinking!r} is not a Gemini thinking config: {error}"
        ) from None
    return copy


def _key_from_environment() -> str | None:
    for variable in KEY_VARIABLES:
        value = os.environ.get(variable)
        if value:
            return value
    return None


__all__ = [
    "API_VERSION",
    "DEFAULT_BASE_URL",
    "KEY_VARIABLES",
    "GeminiAdapter",
]
