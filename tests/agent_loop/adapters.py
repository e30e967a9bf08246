"""Small model adapters for loop tests that need to hold a stream open at a known point."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from dsh_llm import GenerateRequest, StreamChunk, TextDeltaChunk


class HangingAdapter:
    """Streams ``chunks`` and then waits forever (until cancelled), recording requests.
    ``streaming`` is set once the chunks are out, so a test can cancel mid-stream."""

    def __init__(self, chunks: Sequence[StreamChunk] = ()) -> None:
        self.chunks = tuple(chunks) or (
            TextDeltaChunk(index=0, text="partial "),
            TextDeltaChunk(index=0, text="answer"),
        )
        self.requests: list[GenerateRequest] = []
        self.streaming = asyncio.Event()
        self.closed = False

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        try:
            for chunk in self.chunks:
                yield chunk
            self.streaming.set()
            await asyncio.Event().wait()
        finally:
            self.closed = True


async def until(condition: object, *, timeout: float = 2.0) -> None:
    """Yield to the event loop until ``condition()`` is true."""
    assert callable(condition)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.001)
