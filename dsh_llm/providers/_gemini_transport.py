"""The HTTP transport under the Gemini adapter's client: dsh's timeouts on every
request, and server-sent-event comments dropped before the SDK reads them.

``google-genai`` passes its own per-request timeout to ``httpx`` (none at all unless
``HttpOptions.timeout`` is set, and then one value for every phase), so a client's
connect timeout never applies. This transport sets each request's timeouts itself:
``connect_timeout`` for opening the connection, ``timeout`` for every other phase.

The SDK sends nothing until its stream is first read, and then sends the request
and reads the first chunk in one step; :data:`RESPONSE_BEGAN` lets the adapter tell
when the response's headers have come (the end of the first-chunk wait that
precedes any data, as for the other adapters).

The SDK reads an SSE comment line (``: keep-alive``, which proxies and some servers
send) as a JSON chunk and fails on it. Comments are not data: the transport drops
those lines, so they neither break the call nor restart dsh's first-chunk and idle
clocks.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextvars import ContextVar

import httpx

RESPONSE_BEGAN: ContextVar[asyncio.Event | None] = ContextVar(
    "dsh_gemini_response_began", default=None
)
"""Set by the adapter around a call: the transport sets the event once the
response's status line and headers have come."""


class _CommentlessStream(httpx.AsyncByteStream):
    """An event-stream body without its comment lines (lines starting with ``:``)."""

    def __init__(self, body: httpx.AsyncByteStream) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending = b""
        async for chunk in self._body:
            pending += chunk
            complete, newline, pending = pending.rpartition(b"\n")
            if newline:
                kept = _without_comments(complete + newline)
                if kept:
                    yield kept
        if pending and not pending.startswith(b":"):
            yield pending

    async def aclose(self) -> None:
        await self._body.aclose()


def _without_comments(lines: bytes) -> bytes:
    return b"".join(line for line in lines.splitlines(keepends=True) if not line.startswith(b":"))


class DshTimeoutsTransport(httpx.AsyncBaseTransport):
    """Sends each request with dsh's timeouts and strips comments from event streams."""

    def __init__(self, *, connect_timeout: float | None, timeout: float | None) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self._timeouts = {
            "connect": connect_timeout,
            "read": timeout,
            "write": timeout,
            "pool": timeout,
        }

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.extensions = {**request.extensions, "timeout": dict(self._timeouts)}
        response = await self._inner.handle_async_request(request)
        began = RESPONSE_BEGAN.get()
        if began is not None:
            began.set()
        body = response.stream
        event_stream = response.headers.get("content-type", "").startswith("text/event-stream")
        if not event_stream or not isinstance(body, httpx.AsyncByteStream):
            return response
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_CommentlessStream(body),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


__all__ = ["RESPONSE_BEGAN", "DshTimeoutsTransport"]
