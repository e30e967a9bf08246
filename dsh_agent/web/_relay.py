"""The live overlay: model text as it streams, from the app's own worker to every open
stream of the session.

The log holds a reply's chunks only once its step is flushed, so a stream made from
the log shows the reply whole. The relay watches each loop the in-process worker
builds (:meth:`LiveRelay.watch`, the worker's ``on_loop``) through the loop's own
synchronous observation points (live updates and session events, as ``agent.updates()``
does) and hands every text and reasoning delta to the session's listeners at once.
It keeps, per session, the text of each attempt still in progress, so a stream that
opens mid-reply starts from that text, and remembers which message id a failed
attempt had (the log's failed ``finish`` chunk does not carry it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeAlias

from dsh_agent._engine.loop import AgentLoop
from dsh_agent._live_updates import AssistantStarted, LiveUpdate
from dsh_llm._ids import MessageId
from dsh_llm._stream import (
    AbortedFinish,
    ErrorFinish,
    FinishChunk,
    ReasoningDeltaChunk,
    TextDeltaChunk,
)
from dsh_session._header import SessionId
from dsh_session.events import (
    AssistantChunkEvent,
    AssistantMessageEvent,
    SessionEvent,
    TurnEndEvent,
)

_FAILED = (ErrorFinish, AbortedFinish)

FAILURES_KEPT = 256
"""Failed attempts remembered per session (a stream reading the log looks them up)."""


@dataclass(frozen=True, slots=True)
class LiveText:
    """More text (``reasoning``: of the reasoning) of the attempt that will commit as
    ``message_id``, up to its chunk at ``seq``; ``floor`` is the seq of the attempt's
    first event: every event before it was durable when the attempt began."""

    message_id: MessageId
    text: str
    reasoning: bool
    floor: int
    seq: int


@dataclass(slots=True)
class _Attempt:
    message_id: MessageId
    floor: int
    seq: int = 0
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)

    def so_far(self) -> list[LiveText]:
        """The attempt's text so far, reasoning first (the order a model sends them)."""
        parts = [(True, "".join(self.reasoning)), (False, "".join(self.text))]
        return [LiveText(self.message_id, t, kind, self.floor, self.seq) for kind, t in parts if t]


Listener: TypeAlias = Callable[[LiveText], None]


@dataclass(slots=True)
class _Feed:
    attempts: dict[MessageId, _Attempt] = field(default_factory=dict)
    failed: OrderedDict[int, MessageId] = field(default_factory=OrderedDict)
    listeners: list[Listener] = field(default_factory=list)


class LiveRelay:
    """Per session: the attempts in progress, the failed ones, and the listeners."""

    def __init__(self) -> None:
        self._feeds: dict[SessionId, _Feed] = {}

    def watch(self, loop: AgentLoop) -> None:
        """Relay ``loop``'s model text from now on (call it before its first turn
        starts). The observers go with the loop when it is dropped."""
        feed = self._feeds.setdefault(loop.id, _Feed())
        session = loop.session
        streaming: list[_Attempt] = []  # the attempt being observed, if any

        def on_live(update: LiveUpdate) -> None:
            if isinstance(update, AssistantStarted):
                attempt = _Attempt(update.message_id, floor=session.seq)
                streaming[:] = [attempt]
                feed.attempts[attempt.message_id] = attempt

        def on_event(event: SessionEvent) -> None:
            if isinstance(event, AssistantChunkEvent) and streaming:
                self._chunk(feed, streaming[0], event)
            elif isinstance(event, AssistantMessageEvent):
                feed.attempts.pop(event.data.message.id, None)
                streaming.clear()
            elif isinstance(event, TurnEndEvent):
                feed.attempts.clear()  # whatever did not commit will not now
                streaming.clear()

        loop.subscribe(on_live)
        session.subscribe(on_event)

    def _chunk(self, feed: _Feed, attempt: _Attempt, event: AssistantChunkEvent) -> None:
        chunk = event.data.chunk
        if isinstance(chunk, TextDeltaChunk | ReasoningDeltaChunk):
            reasoning = isinstance(chunk, ReasoningDeltaChunk)
            (attempt.reasoning if reasoning else attempt.text).append(chunk.text)
            attempt.seq = event.seq
            live = LiveText(attempt.message_id, chunk.text, reasoning, attempt.floor, event.seq)
            for listener in tuple(feed.listeners):
                listener(live)
        elif isinstance(chunk, FinishChunk) and isinstance(chunk.reason, _FAILED):
            feed.attempts.pop(attempt.message_id, None)
            feed.failed[event.seq] = attempt.message_id
            while len(feed.failed) > FAILURES_KEPT:
                feed.failed.popitem(last=False)

    def listen(
        self, session_id: SessionId, listener: Listener
    ) -> tuple[list[LiveText], Callable[[], None]]:
        """Call ``listener`` with every delta of ``session_id`` from now on; return the
        text of the attempts in progress (each attempt's text so far, sent before any
        later delta) and the function that stops listening."""
        feed = self._feeds.setdefault(session_id, _Feed())
        feed.listeners.append(listener)
        so_far = [text for attempt in feed.attempts.values() for text in attempt.so_far()]

        def stop() -> None:
            if listener in feed.listeners:
                feed.listeners.remove(listener)

        return so_far, stop

    def failed_message(self, session_id: SessionId, seq: int) -> MessageId | None:
        """The id of the attempt whose failed ``finish`` chunk is at ``seq``, if this
        relay saw it."""
        feed = self._feeds.get(session_id)
        return None if feed is None else feed.failed.get(seq)


__all__ = ["FAILURES_KEPT", "Listener", "LiveRelay", "LiveText"]
