"""The ``httpx`` client the Gemini adapter gives ``google-genai``: dsh's timeouts on
every request, the moment a response begins, and server-sent-event comments dropped
before the SDK reads them.

``google-genai`` passes its own per-request timeout to ``httpx`` (none at all unless
``HttpOptions.timeout`` is set, and then one value for every phase), so a client's
connect timeout never applies. A request hook sets each request's timeouts instead:
``connect_timeout`` for opening the connection, ``timeout`` for every other phase.

The SDK sends nothing until its stream is first read, and then sends the request
and reads the first chunk in one step; :data:`RESPONSE_BEGAN` lets the adapter tell
when the response's headers have come (the end of the wait that precedes any data,
as for the other adapters).

The SDK reads an SSE comment line (``: keep-alive``, which proxies and some servers
send) as a JSON chunk and fails on it. Comments are not data: a response hook drops
those lines, so they neither break the call nor restart dsh's first-chunk and idle
clocks.

Hooks rather than a transport of dsh's own, so the client keeps ``httpx``'s own
transport and its proxy settings from the environment.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextvars import ContextVar

import httpx

RESPONSE_BEGAN: ContextVar[asyncio.Event | None] = ContextVar(
    "dsh_gemini_response_began", default=None
)
"""Set by the adapter around a call: the client sets the event once a successful
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


def gemini_http_client(
    *, connect_timeout: float | None, timeout: float | None
) -> httpx.AsyncClient:
    """A client sending each request with these timeouts, telling
    :data:`RESPONSE_BEGAN` when its response begins, and stripping comments from
    event streams."""
    timeouts = {"connect": connect_timeout, "read": timeout, "write": timeout, "pool": timeout}

    async def set_timeouts(request: httpx.Request) -> None:
        request.extensions = {**request.extensions, "timeout": dict(timeouts)}

    async def response_began(response: httpx.Response) -> None:
        began = RESPONSE_BEGAN.get()
        if began is not None and response.is_success:
            began.set()  # an error status is the opening's failure, not a stream
        body = response.stream
        event_stream = response.headers.get("content-type", "").startswith("text/event-stream")
        if event_stream and isinstance(body, httpx.AsyncByteStream):
            response.stream = _CommentlessStream(body)

    return httpx.AsyncClient(event_hooks={"request": [set_timeouts], "response": [response_began]})


__all__ = ["RESPONSE_BEGAN", "gemini_http_client"]
