"""Reading a session stream as it comes, in-process (an ASGI client that hands over
the body chunk by chunk: ``httpx.ASGITransport`` waits for the whole body, which an
endless stream never finishes) or over HTTP from a real server; and the checks the
live-stream tests share."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import httpx
from starlette.types import ASGIApp, Message


@dataclass(frozen=True, slots=True)
class Sse:
    """One server-sent event (``data`` parsed from JSON unless it is ``[DONE]``), or a
    comment line (``comment``). ``live``: after the last event with an ``id`` in the
    piece of body that brought it, so not part of a durable group (exact in-process,
    where each piece is one write of the server)."""

    data: Any = None
    id: int | None = None
    comment: str | None = None
    live: bool = False
    at: float = field(default_factory=time.monotonic)


class SseParser:
    """Turns the body's text, fed in any pieces, into events."""

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, text: str) -> list[Sse]:
        self._buffer += text
        events: list[Sse] = []
        while "\n\n" in self._buffer:
            block, self._buffer = self._buffer.split("\n\n", 1)
            event_id: int | None = None
            for line in block.split("\n"):
                if line.startswith(":"):
                    events.append(Sse(comment=line[1:].strip()))
                elif line.startswith("id: "):
                    event_id = int(line[4:])
                elif line.startswith("data: "):
                    raw = line[6:]
                    data = raw if raw == "[DONE]" else json.loads(raw)
                    events.append(Sse(data=data, id=event_id))
        grouped = max((i for i, e in enumerate(events) if e.id is not None), default=-1)
        return [
            replace(e, live=True) if i > grouped and e.comment is None else e
            for i, e in enumerate(events)
        ]


class StreamReader:
    """The events of one open stream, read by a background task."""

    def __init__(self) -> None:
        self.events: list[Sse] = []
        self.headers: dict[str, str] = {}
        self.status: int | None = None
        self._grew = asyncio.Event()

    def add(self, events: list[Sse]) -> None:
        self.events += events
        self._grew.set()

    async def until(self, check: Callable[[list[Sse]], bool], timeout: float = 20) -> list[Sse]:
        """The events so far, once ``check(events)`` holds."""
        deadline = time.monotonic() + timeout
        while not check(self.events):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out; the stream so far: {self.data()}")
            self._grew.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._grew.wait(), left)
        return self.events

    def data(self) -> list[Any]:
        return [e.data for e in self.events if e.comment is None]


@contextlib.asynccontextmanager
async def asgi_stream(
    app: ASGIApp, path: str, headers: dict[str, str] | None = None
) -> AsyncIterator[StreamReader]:
    """GET ``path`` from ``app`` and read its body as it comes; the client
    disconnects when the block ends."""
    url = urlsplit(path)
    reader = StreamReader()
    parser = SseParser()
    gone = asyncio.Event()
    sent_request = False

    async def receive() -> Message:
        nonlocal sent_request
        if not sent_request:
            sent_request = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            reader.status = message["status"]
            reader.headers = {k.decode(): v.decode() for k, v in message["headers"]}
            reader.add([])
        elif message["type"] == "http.response.body":
            reader.add(parser.feed(message.get("body", b"").decode()))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": url.path,
        "raw_path": url.path.encode(),
        "query_string": url.query.encode(),
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }

    async def serve() -> None:
        await app(scope, receive, send)

    task = asyncio.create_task(serve())
    try:
        await reader.until(lambda _: reader.status is not None)
        yield reader
    finally:
        gone.set()
        await asyncio.wait_for(task, 10)


def http_stream(
    client: httpx.Client, path: str, headers: dict[str, str] | None = None
) -> Iterator[Sse]:
    """The events of a real server's stream, as they come; connected (its response
    head received) before this returns."""
    request = client.stream("GET", path, headers=headers or {}, timeout=30)
    response = request.__enter__()
    assert response.status_code == 200, response.read()

    def events() -> Iterator[Sse]:
        parser = SseParser()
        try:
            for text in response.iter_text():
                yield from parser.feed(text)
        finally:
            request.__exit__(None, None, None)

    return events()


# --- checks ---------------------------------------------------------------------------


def ag_ui_texts(events: list[Sse]) -> dict[str, str]:
    """Per message id, the concatenation of its ``TEXT_MESSAGE_CONTENT`` deltas, a
    ``TEXT_MESSAGE_START`` for an id already seen restarting its text."""
    texts: dict[str, str] = {}
    for event in events:
        data = event.data
        if not isinstance(data, dict):
            continue
        if data["type"] == "TEXT_MESSAGE_START":
            texts[data["messageId"]] = ""
        elif data["type"] == "TEXT_MESSAGE_CONTENT":
            texts[data["messageId"]] += data["delta"]
    return texts


def live_before_commit(events: list[Sse], message_id: str) -> list[str]:
    """The deltas of ``message_id`` sent live (no SSE id), before its closing group."""
    deltas: list[str] = []
    for event in events:
        data = event.data
        if not isinstance(data, dict) or data.get("messageId") != message_id:
            continue
        if data["type"] == "TEXT_MESSAGE_END":
            return deltas
        if data["type"] == "TEXT_MESSAGE_CONTENT" and event.live:
            deltas.append(data["delta"])
    return deltas


def of_type(events: list[Sse], kind: str) -> list[dict[str, Any]]:
    return [e.data for e in events if isinstance(e.data, dict) and e.data.get("type") == kind]


def ids_in_order(events: list[Sse]) -> list[int]:
    return [e.id for e in events if e.id is not None]
