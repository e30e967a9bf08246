"""The serve-load bench's clients: one conversation per session, all at once, each
reading its replies' deltas over SSE and noting when each arrived.

- **dsh**: create the session (the client mints its id), open its event stream
  (``GET .../events``, kept open for the whole conversation, read by its own task so
  every event is timed as it arrives), then per turn post the prompt with a
  client-minted message id and wait for the turn's ``RUN_FINISHED``.
- **pydantic-ai's AG-UI app**: per turn, post a ``RunAgentInput`` holding the whole
  conversation so far (the client holds it, as AG-UI clients do) and read the run's
  events from the response.

Each reply keeps the assistant message's text chunks with their arrival times;
:func:`arrivals` turns them into the moment each scripted delta was complete.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from _serve_script import Script, prompt_of

SSE_HEADERS = {"Accept": "text/event-stream"}
FRESH_CONNECTIONS = httpx.Limits(max_connections=None, max_keepalive_connections=0)
"""Every request on a new connection: a kept-alive one that Uvicorn closes after 5 s
idle may be picked for the next request just as it closes ("Server disconnected
without sending a response"): two of the first 200-session runs failed so."""


@dataclass(slots=True)
class Reply:
    """One turn as its client saw it."""

    prompt: str
    sent: float
    """``perf_counter`` just before the prompt was posted."""
    user_id: str = ""
    """The prompt's message id on the stream (the peer does not echo the prompt)."""
    message_id: str = ""
    """The reply's message id on the stream."""
    chunks: list[tuple[float, str]] = field(default_factory=list)
    """``(arrival, text)`` of each content event of the reply, in order."""

    @property
    def text(self) -> str:
        return "".join(text for _, text in self.chunks)


@dataclass(slots=True)
class Conversation:
    """One session's turns."""

    session_id: str
    replies: list[Reply] = field(default_factory=list)


def arrivals(reply: Reply, script: Script) -> list[float]:
    """When each of the reply's scripted deltas had fully arrived (the arrival of the
    chunk that completed it); shorter than the script when text is missing."""
    ends, total = [], 0
    for token in script.tokens(reply.prompt):
        total += len(token)
        ends.append(total)
    times: list[float] = []
    received = 0
    for arrival, text in reply.chunks:
        received += len(text)
        while len(times) < len(ends) and ends[len(times)] <= received:
            times.append(arrival)
    return times


async def _sse_events(response: httpx.Response) -> AsyncIterator[tuple[float, dict[str, Any]]]:
    """``(arrival, event)`` of each SSE ``data:`` line, timed as it is read."""
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            yield time.perf_counter(), json.loads(line[6:])


class _TurnReader:
    """Reads a dsh session's stream: files the reply's text under its turn and wakes
    the conversation when a turn's run finishes. A second message start for the
    reply's id restarts its text (docs/web-stream.md's restart rule)."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.finished = 0
        self.changed = asyncio.Event()

    async def read(self, response: httpx.Response) -> None:
        async for arrival, event in _sse_events(response):
            kind = event["type"]
            reply = self.conversation.replies[-1] if self.conversation.replies else None
            if kind == "RUN_FINISHED":
                self.finished += 1
                self.changed.set()
            elif reply is None:
                continue
            elif kind == "TEXT_MESSAGE_START" and event["role"] == "user":
                reply.user_id = event["messageId"]
            elif kind == "TEXT_MESSAGE_START" and event["role"] == "assistant":
                if reply.message_id == event["messageId"]:
                    reply.chunks.clear()
                elif not reply.message_id:
                    reply.message_id = event["messageId"]
            elif kind == "TEXT_MESSAGE_CONTENT" and event["messageId"] == reply.message_id:
                reply.chunks.append((arrival, event["delta"]))

    async def until_finished(self, turns: int) -> None:
        while self.finished < turns:
            self.changed.clear()
            await self.changed.wait()


async def dsh_conversation(
    client: httpx.AsyncClient, index: int, script: Script, turns: int
) -> Conversation:
    """Session ``index``'s conversation with ``dsh serve``."""
    sid = f"load-{index:03d}"
    created = await client.post("/api/sessions", json={"id": sid})
    _expect(created, 201)
    conversation = Conversation(sid)
    reader = _TurnReader(conversation)
    async with client.stream("GET", f"/api/sessions/{sid}/events", headers=SSE_HEADERS) as stream:
        _expect(stream, 200)
        reading = asyncio.create_task(reader.read(stream))
        try:
            for turn in range(1, turns + 1):
                prompt = prompt_of(index, turn)
                conversation.replies.append(Reply(prompt, time.perf_counter()))
                body = {"id": f"{sid}.u{turn}", "content": prompt}
                _expect(await client.post(f"/api/sessions/{sid}/messages", json=body), 202)
                await _racing(reader.until_finished(turn), reading)
        finally:
            reading.cancel()
    return conversation


async def _racing(waiting: Awaitable[object], reading: asyncio.Task[None]) -> None:
    """Wait for ``waiting``; a stream that ends or fails first is an error."""
    wait = asyncio.ensure_future(waiting)
    done, _ = await asyncio.wait({wait, reading}, return_when=asyncio.FIRST_COMPLETED)
    if wait not in done:
        wait.cancel()
        reading.result()  # its error, if it failed
        raise RuntimeError("the session's stream ended before the turn finished")


async def peer_conversation(
    client: httpx.AsyncClient, index: int, script: Script, turns: int
) -> Conversation:
    """Session ``index``'s conversation with pydantic-ai's AG-UI app."""
    conversation = Conversation(f"load-{index:03d}")
    history: list[dict[str, str]] = []
    for turn in range(1, turns + 1):
        prompt = prompt_of(index, turn)
        user = {"id": f"{conversation.session_id}.u{turn}", "role": "user", "content": prompt}
        body = {
            "threadId": conversation.session_id,
            "runId": f"{conversation.session_id}.run{turn}",
            "messages": [*history, user],
            "state": None,
            "tools": [],
            "context": [],
            "forwardedProps": None,
        }
        reply = Reply(prompt, time.perf_counter())
        conversation.replies.append(reply)
        async with client.stream("POST", "/", json=body, headers=SSE_HEADERS) as response:
            _expect(response, 200)
            async for arrival, event in _sse_events(response):
                if event["type"] == "TEXT_MESSAGE_START" and not reply.message_id:
                    reply.message_id = event["messageId"]
                elif event["type"] == "TEXT_MESSAGE_CONTENT":
                    reply.chunks.append((arrival, event["delta"]))
                elif event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                    break
        history += [user, {"id": reply.message_id, "role": "assistant", "content": reply.text}]
    return conversation


@asynccontextmanager
async def idle_streams(url: str, conversations: list[Conversation]) -> AsyncIterator[None]:
    """Every dsh session's event stream open and read (its log replayed) for the body's
    duration, with no turn running: a chat tab left open on each session."""
    limits = FRESH_CONNECTIONS
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120.0) as client:
        replayed = [asyncio.Event() for _ in conversations]

        async def hold(conversation: Conversation, done: asyncio.Event) -> None:
            path = f"/api/sessions/{conversation.session_id}/events"
            async with client.stream("GET", path, headers=SSE_HEADERS) as stream:
                _expect(stream, 200)
                finished = 0
                async for _, event in _sse_events(stream):
                    finished += event["type"] == "RUN_FINISHED"
                    if finished == len(conversation.replies):
                        done.set()

        pairs = zip(conversations, replayed, strict=True)
        holding = [asyncio.create_task(hold(c, done)) for c, done in pairs]
        try:
            for done, task in zip(replayed, holding, strict=True):
                await _racing(done.wait(), task)
            yield
        finally:
            for task in holding:
                task.cancel()
            await asyncio.gather(*holding, return_exceptions=True)


ConversationRun = Callable[[httpx.AsyncClient, int, Script, int], Awaitable[Conversation]]


async def talk(
    url: str,
    run: ConversationRun,
    script: Script,
    *,
    sessions: int,
    turns: int,
    stagger: float,
    first: int = 1,
) -> list[Conversation]:
    """``sessions`` conversations (numbered from ``first``) at once against ``url``,
    each starting after a seeded pause in ``[0, stagger)`` so they do not move in
    lockstep."""
    rng = random.Random(29)
    pauses = [rng.uniform(0, stagger) for _ in range(sessions)]
    limits = FRESH_CONNECTIONS
    timeout = httpx.Timeout(120.0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as client:

        async def one(number: int, pause: float) -> Conversation:
            await asyncio.sleep(pause)
            return await run(client, number, script, turns)

        return await asyncio.gather(*(one(first + n, p) for n, p in enumerate(pauses)))


def _expect(response: httpx.Response, status: int) -> None:
    if response.status_code != status:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path} answered "
            f"{response.status_code}, not {status}"
        )
