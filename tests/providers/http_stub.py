"""A small scripted HTTP/1.1 server on 127.0.0.1 for provider adapter tests.

Each request is answered by the next scripted reply: a JSON body with a status, or a
server-sent-event stream sent with chunked transfer encoding. After its frames a
stream normally ends; it can instead be cut (the connection is aborted, which the
client sees as a broken transfer: the chunked body never terminates) or held open
until the client hangs up, optionally sending keep-alive comments meanwhile. Every
request is recorded with its path, headers and JSON body so tests can assert the
wire shape.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: Mapping[str, str]
    """Header names in lower case."""
    body: Any
    """The JSON body, parsed."""


@dataclass(frozen=True)
class Reply:
    """One scripted response."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    """The whole body of a non-streaming reply."""
    events: tuple[bytes, ...] | None = None
    """Server-sent-event frames; when set, the reply streams them."""
    then: Literal["end", "cut", "reset", "hold"] = "end"
    """After the frames: end the body, abort the connection (the client reads an end
    of file mid-body), reset it (a TCP RST: the client's read fails with
    ``ECONNRESET``), or keep it open (sending nothing more) until the client hangs
    up."""
    stall: bool = False
    """Send nothing at all, not even the status line, until the client hangs up."""
    keepalive_every: float | None = None
    """While a reply is held open, send an SSE comment (``: keep-alive``) this often."""


def sse_frame(data: object, *, event: str | None = None) -> bytes:
    """One server-sent event whose data is ``data`` as JSON (a str is sent as is)."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event is not None else ""
    return f"{head}data: {payload}\n\n".encode()


def sse_reply(
    frames: Iterable[bytes],
    *,
    headers: Mapping[str, str] | None = None,
    then: Literal["end", "cut", "reset", "hold"] = "end",
    keepalive_every: float | None = None,
) -> Reply:
    """A 200 event-stream reply."""
    return Reply(
        headers=dict(headers or {}),
        events=tuple(frames),
        then=then,
        keepalive_every=keepalive_every,
    )


def json_reply(status: int, body: object, *, headers: Mapping[str, str] | None = None) -> Reply:
    """A JSON reply, typically an error."""
    return Reply(status=status, headers=dict(headers or {}), body=json.dumps(body).encode())


_REASONS = {200: "OK", 400: "Bad Request", 429: "Too Many Requests", 500: "Internal Server Error"}


class StubServer:
    """Serves scripted replies in order and records every request."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Reply] = deque()
        self._server: asyncio.Server | None = None
        self.port = 0
        self.client_hung_up = asyncio.Event()
        """Set when a client closes a connection that a held or stalled reply kept open."""
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests."""
        self._replies.extend(replies)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies received so far, in order."""
        return [request.body for request in self.requests]

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and close the connections still open, letting their
        handlers finish."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for writer in self._connections.values():
            writer.close()
        await asyncio.gather(*self._connections)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = asyncio.current_task()
        assert handler is not None
        self._connections[handler] = writer
        try:
            request = await _read_request(reader)
            self.requests.append(request)
            reply = (
                self._replies.popleft()
                if self._replies
                else json_reply(
                    500, {"error": {"message": "no scripted reply left", "type": "stub_error"}}
                )
            )
            if not reply.stall:
                await _write_reply(writer, reply)
            if reply.stall or reply.then == "hold":
                await _hold(reader, writer, reply.keepalive_every)
                self.client_hung_up.set()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            del self._connections[handler]


async def _hold(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, keepalive_every: float | None
) -> None:
    """Return when the client closes the connection (seen as EOF, or as a failed
    write), sending a keep-alive comment every ``keepalive_every`` seconds meanwhile."""
    hung_up = asyncio.ensure_future(reader.read())  # completes at EOF
    try:
        while keepalive_every is not None and not hung_up.done():
            writer.write(_chunk(b": keep-alive\n\n"))
            await writer.drain()
            await asyncio.wait([hung_up], timeout=keepalive_every)
        await hung_up
    except ConnectionError:
        pass
    finally:
        hung_up.cancel()


def _chunk(data: bytes) -> bytes:
    """``data`` as one chunk of a chunked transfer."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    method, path, _ = head[0].split(" ", 2)
    headers = {}
    for line in head[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    raw = await reader.readexactly(int(headers.get("content-length", "0")))
    return RecordedRequest(method, path, headers, json.loads(raw) if raw else None)


async def _write_reply(writer: asyncio.StreamWriter, reply: Reply) -> None:
    streaming = reply.events is not None
    headers = {
        "content-type": "text/event-stream" if streaming else "application/json",
        "connection": "close",
        **(
            {"transfer-encoding": "chunked"}
            if streaming
            else {"content-length": str(len(reply.body))}
        ),
        **reply.headers,
    }
    status_line = f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}\r\n"
    head = status_line + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    writer.write((head + "\r\n").encode("latin-1"))
    if reply.events is None:
        writer.write(reply.body)
        await writer.drain()
        return
    for frame in reply.events:
        writer.write(_chunk(frame))
        await writer.drain()
    if reply.then == "reset":
        # Linger on, with a zero timeout: closing sends RST instead of FIN.
        writer.get_extra_info("socket").setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
        )
        writer.transport.abort()
    elif reply.then == "cut":
        writer.transport.abort()
    elif reply.then == "end":
        writer.write(b"0\r\n\r\n")
        await writer.drain()


@contextmanager
def unaccepting_port() -> Iterator[int]:
    """A port on 127.0.0.1 whose listener never accepts and whose accept queue is full:
    the kernel drops further SYNs, so a new connection hangs in connect."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port: int = listener.getsockname()[1]
    fillers = [socket.socket() for _ in range(4)]  # more than the queue holds
    for filler in fillers:
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
    time.sleep(0.2)
    try:
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listener.close()
