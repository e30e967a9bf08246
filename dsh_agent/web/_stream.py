"""A session's live stream as Server-Sent Events, resumable, in either wire form.

Two sources, merged per connection (docs/web-stream.md):

- **the durable log** (``store.follow``), the same in every process and after every
  reconnect. Each log event becomes zero or more wire events (``_forms``); the *last*
  SSE event of each group carries the event's seq as its ``id``, so a client that
  reconnects with ``Last-Event-ID: <seq>`` gets the groups after that seq: a group is
  never split across the id, nothing is lost and nothing repeated;
- **the live overlay** (``_relay``): the model text of a reply the app's own worker
  is streaming, as it arrives, with no ``id``. A delta waits until the connection has
  read the log up to its attempt's start, so it never overtakes an earlier durable
  group (``follow`` polls: the previous step's commit may not be read yet when the
  next step streams). The committed message is authoritative: its group adds only what
  the deltas did not send, and a failed attempt (whose id never commits) is announced
  so the client drops its text. A connection opened mid-reply gets the reply's text
  so far once, then the deltas.

While nothing is sent for ``keepalive`` seconds, an SSE comment keeps proxies from
dropping the idle stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from dsh_agent._service._log_updates import LogTranslator
from dsh_agent.streaming._ag_ui import sse_line
from dsh_agent.streaming._updates import (
    AgentUpdate,
    AssistantCommitted,
    AssistantFailed,
    ReasoningDelta,
    RetryScheduled,
    TextDelta,
    TurnEnded,
)
from dsh_agent.web._forms import WireForm
from dsh_agent.web._relay import LiveRelay, LiveText
from dsh_llm._failure import LlmFailure
from dsh_llm._ids import MessageId
from dsh_llm._stream import AbortedFinish, ErrorFinish, FinishChunk
from dsh_llm.failure_codes import ABORTED
from dsh_session._header import SessionId
from dsh_session.events import AssistantChunkEvent, LlmRetryEvent, LogEvent
from dsh_session.stores import SessionStore

MAX_BACKLOG = 1000
"""Log events read ahead of a connection's writes at most (a stalled client must not
make the server read a whole log into memory)."""

KEEPALIVE = ": keep-alive\n\n"
"""The SSE comment written while a stream is idle (clients ignore comments)."""


def sse_group(events: list[dict[str, Any]], seq: int) -> str:
    """The SSE text of one log event's wire events, the last one carrying ``seq``."""
    lines = [sse_line(event) for event in events]
    lines[-1] = f"id: {seq}\n{lines[-1]}"
    return "".join(lines)


@dataclass(frozen=True, slots=True)
class _Stopped:
    """Following the log failed (e.g. the session was deleted)."""

    error: Exception


_Item: TypeAlias = LogEvent | LiveText | _Stopped


class _Inbox:
    """What reaches one connection, in arrival order: log events from its follow task,
    live text from the relay. Adjacent live text of one message part is merged while
    the connection lags, so a slow client costs one item per part, not per chunk."""

    def __init__(self) -> None:
        self._items: deque[_Item] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._backlog = 0
        """Log events queued: the follow task waits while there are too many."""
        self.room = asyncio.Event()
        self.room.set()

    def put(self, item: _Item) -> None:
        if not isinstance(item, LiveText):
            self._backlog += 1
            if self._backlog >= MAX_BACKLOG:
                self.room.clear()
        last = self._items[-1] if self._items else None
        if isinstance(item, LiveText) and isinstance(last, LiveText) and _same_part(last, item):
            self._items[-1] = replace(last, text=last.text + item.text, seq=item.seq)
        else:
            self._items.append(item)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self, timeout: float) -> _Item | None:
        """The next item, or ``None`` after ``timeout`` seconds without one."""
        if not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._waiter, timeout)
            if not self._items:
                return None
        item = self._items.popleft()
        if not isinstance(item, LiveText):
            self._backlog -= 1
            if self._backlog < MAX_BACKLOG:
                self.room.set()
        return item


def _same_part(first: LiveText, then: LiveText) -> bool:
    return (first.message_id, first.reasoning) == (then.message_id, then.reasoning)


class _Overlay:
    """One connection's merge of the log and the live text, into SSE text."""

    def __init__(
        self, session_id: SessionId, relay: LiveRelay, form: WireForm, after: int | None
    ) -> None:
        self._session_id = session_id
        self._relay = relay
        self._form = form
        self._after = after
        self._translator = LogTranslator()  # reads from seq 0 to know the turn and step
        self._read = -1
        """The seq of the last log event read."""
        self._held: deque[LiveText] = deque()
        """Live text waiting for the log to be read up to its attempt's start."""
        self._open: dict[MessageId, None] = {}
        """Messages this connection streamed live and that neither committed nor failed."""

    def durable(self, event: LogEvent) -> str:
        self._read = event.seq
        updates = self._updates(event)
        events = [wire for update in updates for wire in self._form.encode(update)]
        replay = self._after is not None and event.seq <= self._after  # sent before
        group = sse_group(events, event.seq) if events and not replay else ""
        return group + self._release()

    def live(self, text: LiveText) -> str:
        held = self._held
        if held and _same_part(held[-1], text):
            held[-1] = replace(held[-1], text=held[-1].text + text.text, seq=text.seq)
        else:
            held.append(text)
        return self._release()

    def _release(self) -> str:
        """The live text whose attempt started before the last event read."""
        lines: list[str] = []
        while self._held and self._held[0].floor - 1 <= self._read:
            text = self._held.popleft()
            self._open[text.message_id] = None
            kind = ReasoningDelta if text.reasoning else TextDelta
            update = kind(text.message_id, 0, text.text, text.seq)
            lines += [sse_line(wire) for wire in self._form.encode(update)]
        return "".join(lines)

    def _updates(self, event: LogEvent) -> list[AgentUpdate]:
        if isinstance(event, AssistantChunkEvent):
            failed = self._failed(event)
            return [] if failed is None else [failed]
        if isinstance(event, LlmRetryEvent):  # not a remote reader's update: the UI's
            retry = event.data
            return [
                RetryScheduled(
                    retry.turn,
                    retry.step,
                    retry.retry,
                    retry.max_retries,
                    retry.delay_ms,
                    retry.failure,
                    event.seq,
                )
            ]
        update = self._translator.translate(event)
        if update is None:
            return []
        if isinstance(update, AssistantCommitted):
            self._open.pop(update.message_id, None)
        if isinstance(update, TurnEnded):  # what streamed here and never committed
            unfinished = LlmFailure(message="the attempt ended without a message", code=ABORTED)
            dropped = [AssistantFailed(m, unfinished, event.seq) for m in self._open]
            self._open.clear()
            return [*dropped, update]
        return [update]

    def _failed(self, event: AssistantChunkEvent) -> AssistantFailed | None:
        """A failed attempt's ``finish`` chunk, when the client may show its text:
        streamed on this connection, or on one before a reconnect."""
        chunk = event.data.chunk
        if not isinstance(chunk, FinishChunk) or not isinstance(
            chunk.reason, ErrorFinish | AbortedFinish
        ):
            return None
        message_id = self._relay.failed_message(self._session_id, event.seq)
        if message_id is None:
            return None
        resumed = self._after is not None and event.seq > self._after
        if message_id not in self._open and not resumed:
            return None
        self._open.pop(message_id, None)
        return AssistantFailed(message_id, chunk.reason.failure, event.seq)


async def session_stream(
    store: SessionStore,
    relay: LiveRelay,
    session_id: SessionId,
    form: WireForm,
    *,
    after: int | None,
    poll_interval: float,
    keepalive: float,
) -> AsyncIterator[str]:
    """The SSE text of session ``session_id``: its log events after seq ``after`` (all
    of them when ``None``) and the live text of its replies, then each new one, until
    the client goes away."""
    inbox = _Inbox()
    so_far, stop_listening = relay.listen(session_id, inbox.put)
    for started in so_far:  # before any later delta: nothing happens between
        inbox.put(started)
    follower = asyncio.create_task(_follow(store, session_id, inbox, poll_interval))
    overlay = _Overlay(session_id, relay, form, after)
    try:
        while True:
            item = await inbox.get(keepalive)
            if item is None:
                yield KEEPALIVE
            elif isinstance(item, _Stopped):
                yield form.ended(item.error)
                return
            else:
                sse = overlay.live(item) if isinstance(item, LiveText) else overlay.durable(item)
                if sse:
                    yield sse
    finally:
        stop_listening()
        follower.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await follower


async def _follow(
    store: SessionStore, session_id: SessionId, inbox: _Inbox, poll_interval: float
) -> None:
    try:
        async for event in store.follow(session_id, poll_interval=poll_interval):
            inbox.put(event)
            await inbox.room.wait()  # a client that reads slowly slows the reading
    except Exception as error:
        inbox.put(_Stopped(error))


__all__ = ["KEEPALIVE", "MAX_BACKLOG", "session_stream", "sse_group"]
