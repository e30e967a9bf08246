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

FAILURES_KEPT = 4096
"""Failed attempts whose ids the relay remembers, app-wide (a stream reading a failed
``finish`` chunk from the log looks its id up)."""


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
    """A session's attempts in progress and its listeners; dropped when both are
    empty, so an idle session costs the relay nothing."""

    attempts: dict[MessageId, _Attempt] = field(default_factory=dict)
    listeners: list[Listener] = field(default_factory=list)


class LiveRelay:
    """Per session: the attempts in progress and the listeners; per app: the ids of
    the last :data:`FAILURES_KEPT` failed attempts."""

    def __init__(self) -> None:
        self._feeds: dict[SessionId, _Feed] = {}
        self._failed: OrderedDict[tuple[SessionId, int], MessageId] = OrderedDict()

    def watch(self, loop: AgentLoop) -> None:
        """Relay ``loop``'s model text from now on (call it before its first turn
        starts). The observers go with the loop when it is dropped."""
        sid, session = loop.id, loop.session
        streaming: list[_Attempt] = []  # the attempt being observed, if any

        def on_live(update: LiveUpdate) -> None:
            if isinstance(update, AssistantStarted):
                attempt = _Attempt(update.message_id, floor=session.seq)
                streaming[:] = [attempt]
                self._feed(sid).attempts[attempt.message_id] = attempt

        def on_event(event: SessionEvent) -> None:
            if isinstance(event, AssistantChunkEvent) and streaming:
                if self._chunk(sid, streaming[0], event):
                    streaming.clear()
            elif isinstance(event, AssistantMessageEvent):
                self._end(sid, event.data.message.id)
                streaming.clear()
            elif isinstance(event, TurnEndEvent):
                self._end(sid, None)  # whatever did not commit will not now
                streaming.clear()

        loop.subscribe(on_live)
        session.subscribe(on_event)

    def _chunk(self, sid: SessionId, attempt: _Attempt, event: AssistantChunkEvent) -> bool:
        """Relay a delta; True when the chunk ended the attempt with a failure."""
        chunk = event.data.chunk
        if isinstance(chunk, TextDeltaChunk | ReasoningDeltaChunk):
            reasoning = isinstance(chunk, ReasoningDeltaChunk)
            (attempt.reasoning if reasoning else attempt.text).append(chunk.text)
            attempt.seq = event.seq
            live = LiveText(attempt.message_id, chunk.text, reasoning, attempt.floor, event.seq)
            feed = self._feeds.get(sid)
            for listener in () if feed is None else tuple(feed.listeners):
                listener(live)
        elif isinstance(chunk, FinishChunk) and isinstance(chunk.reason, _FAILED):
            self._failed[(sid, event.seq)] = attempt.message_id
            while len(self._failed) > FAILURES_KEPT:
                self._failed.popitem(last=False)
            self._end(sid, attempt.message_id)
            return True
        return False

    def listen(
        self, session_id: SessionId, listener: Listener
    ) -> tuple[list[LiveText], Callable[[], None]]:
        """Call ``listener`` with every delta of ``session_id`` from now on; return the
        text of the attempts in progress (each attempt's text so far, sent before any
        later delta) and the function that stops listening."""
        feed = self._feed(session_id)
        feed.listeners.append(listener)
        so_far = [text for attempt in feed.attempts.values() for text in attempt.so_far()]

        def stop() -> None:
            if listener in feed.listeners:
                feed.listeners.remove(listener)
                self._tidy(session_id)

        return so_far, stop

    def failed_message(self, session_id: SessionId, seq: int) -> MessageId | None:
        """The id of the attempt whose failed ``finish`` chunk is at ``seq``, if this
        relay saw it (and it is among the last :data:`FAILURES_KEPT`)."""
        return self._failed.get((session_id, seq))

    @property
    def sessions(self) -> int:
        """Sessions with a listener or an attempt in progress."""
        return len(self._feeds)

    def _feed(self, sid: SessionId) -> _Feed:
        feed = self._feeds.get(sid)
        if feed is None:
            feed = self._feeds[sid] = _Feed()
        return feed

    def _end(self, sid: SessionId, message_id: MessageId | None) -> None:
        """Attempt ``message_id`` (``None``: every attempt) is over."""
        feed = self._feeds.get(sid)
        if feed is not None:
            if message_id is None:
                feed.attempts.clear()
            else:
                feed.attempts.pop(message_id, None)
            self._tidy(sid)

    def _tidy(self, sid: SessionId) -> None:
        feed = self._feeds.get(sid)
        if feed is not None and not feed.attempts and not feed.listeners:
            del self._feeds[sid]


__all__ = ["FAILURES_KEPT", "Listener", "LiveRelay", "LiveText"]
