"""Adapter for the OpenAI Responses API (``POST /responses``, streaming), built on
the official ``openai`` package.

Install with ``pip install 'dsh-sdk[openai]'``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, cast

from dsh_llm._attachments import read_request_attachments
from dsh_llm._request import GenerateRequest
from dsh_llm._stream import StreamChunk
from dsh_llm.providers._openai_client import OpenAIConnection
from dsh_llm.providers._openai_responses_stream import ResponsesStreamTranslator
from dsh_llm.providers._openai_responses_wire import ReasoningSummary, responses_body
from dsh_llm.providers._streaming import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_FIRST_CHUNK_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    SdkStream,
)

if TYPE_CHECKING:
    import openai
    from openai.types.responses import ResponseInputParam


class OpenAIResponsesAdapter:
    """A :class:`~dsh_llm._request.ModelAdapter` over streaming ``/responses``.

    Client, keys, base URL, retries and timeouts work as for
    :class:`~dsh_llm.providers.OpenAIChatAdapter`: pass a configured
    ``openai.AsyncOpenAI`` as ``client``, or let the adapter build one for
    ``provider`` (``"openai"``: the SDK's endpoint and ``OPENAI_API_KEY``; any other
    name needs a ``base_url``). ``model`` (kept as ``adapter.model``) is the model an
    ``AgentLoop`` built without ``model=`` asks for.

    Nothing is stored at the provider: every request is sent with ``store: false``
    and carries the whole conversation. Reasoning items come back as reasoning
    blocks (one per summary or reasoning-text part); their ids and encrypted content
    ride in the assistant message's replay state and are sent back exactly, to the
    same provider and model. ``encrypted_reasoning`` (default on) asks for that
    encrypted content (``include: ["reasoning.encrypted_content"]``); models that do
    not reason refuse the request with it, so turn it off for them.
    ``reasoning_summary`` (``"auto"``, ``"concise"``, ``"detailed"``; default none)
    asks a reasoning model for a summary of its reasoning, streamed as reasoning
    blocks. ``GenerateRequest.reasoning_effort`` becomes ``reasoning.effort``.
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
        encrypted_reasoning: bool = True,
        reasoning_summary: ReasoningSummary | None = None,
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
        self._encrypted_reasoning = encrypted_reasoning
        self._reasoning_summary: ReasoningSummary | None = reasoning_summary

    def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        """Stream one response; failures end in ``finish {error}``."""
        return self._connection.stream(
            lambda: self._open(request), ResponsesStreamTranslator(), "responses"
        )

    async def _open(self, request: GenerateRequest) -> SdkStream[Any]:
        attachments = await read_request_attachments(request.messages)
        body = responses_body(
            request,
            encrypted_reasoning=self._encrypted_reasoning,
            reasoning_summary=self._reasoning_summary,
            attachments=attachments,
        )
        return await self.client.responses.create(
            model=request.model,
            input=cast("ResponseInputParam", body.input),
            stream=True,
            extra_body=body.options,
        )


__all__ = [
    "OpenAIResponsesAdapter",
]
