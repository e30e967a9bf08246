"""Update streams: the typed updates of an agent as it works. ``agent.updates()`` streams
everything from the moment it is called until the loop closes (or, ``until_idle``,
until the agent is next idle), whatever starts the work: a followup, ``retry()``,
``regenerate()``, an approval decision. ``agent.stream(message)`` /
``run_stream(agent, message)`` subscribe, send ``message`` and stream until idle.

A stream is built on the two synchronous observation points the loop already has:
the session's event observers (every committed event, translated into updates) and
the agent's live updates (inbox, status, the start of a model stream, passed on as they
are). Both fire in the loop's own order, into one buffer, so the updates keep that
order; and the stream subscribes when it is created, so nothing the agent does after
that call is missed, even before the first ``__anext__``.

Buffering policy: the loop never waits for the consumer. While the consumer lags,
adjacent text (or reasoning) deltas of one block are merged into one update, which
keeps every character and bounds the buffer by the number of UI elements rather than
chunks. If the buffer still exceeds ``max_pending``, the stream stops observing,
delivers what it holds and then raises :class:`StreamOverflowError` naming the first
event it did not deliver (the log has it; reload and resume there).

Closing the stream (``aclose()``, leaving ``async with``, or dropping the iterator
after ``break``) only stops observing: the agent's turn goes on (use
``agent.cancel()`` to stop it).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Self

from dsh_agent._live_updates import (
    AgentStatus,
    AssistantStarted,
    LiveUpdate,
    LiveUpdateObserver,
    StatusUpdate,
)
from dsh_agent._run_options import RunPrompt, user_prompt
from dsh_agent.errors import StreamOverflowError
from dsh_agent.streaming._translate import EventTranslator
from dsh_agent.streaming._updates import (
    AgentUpdate,
    ReasoningDelta,
    TextDelta,
)
from dsh_llm._messages import UserMessage
from dsh_session.events import (
    SessionEvent,
)

if TYPE_CHECKING:
    from dsh_session._session import Session

DEFAULT_MAX_PENDING = 10_000
"""Updates a stream holds for a lagging consumer (after merging deltas) before it
gives up with :class:`StreamOverflowError`."""


class StreamedAgent(Protocol):
    """What a stream needs of its agent; every :class:`~dsh_agent.Agent` has it. (Named
    here rather than importing the protocol, which returns :class:`UpdateStream`.)"""

    @property
    def session(self) -> Session: ...

    @property
    def status(self) -> AgentStatus: ...

    def subscribe(self, observer: LiveUpdateObserver) -> Callable[[], None]: ...

    def followup(self, message: UserMessage) -> None: ...


class _Buffer:
    """What the observers write into: the pending updates and how the stream ends.
    Kept apart from :class:`UpdateStream` so the agent's observer lists never hold
    the iterator itself, which can then be collected (and unsubscribe) after ``break``."""

    def __init__(
        self, agent: StreamedAgent, max_pending: int, merge_deltas: bool, until_idle: bool
    ) -> None:
        self.agent = agent
        self.max_pending = max_pending
        self.merge_deltas = merge_deltas
        self.until_idle = until_idle
        self.pending: deque[AgentUpdate | _GrowingDelta] = deque()
        self.waiter: asyncio.Future[None] | None = None  # the consumer, when it waits
        self.idle_seen = False
        self.ended = False  # the agent closed: nothing more will come
        self.failure: BaseException | None = None
        self.unsubscribes: list[Callable[[], None]] = []
        self.on_idle: Callable[[], None] | None = None
        self._translator = EventTranslator(agent.session)

    def stop_observing(self) -> None:
        for unsubscribe in self.unsubscribes:
            unsubscribe()
        self.unsubscribes.clear()

    @property
    def observing(self) -> bool:
        return bool(self.unsubscribes)

    def end(self) -> None:
        """The agent closed: stop observing; the consumer gets what is buffered."""
        self.ended = True
        self.stop_observing()
        self._wake()

    # --- the observers ----------------------------------------------------------------

    def on_live(self, update: LiveUpdate) -> None:
        if isinstance(update, AssistantStarted):
            self._translator.streaming = update.message_id
        self._put(update)  # the agent's own object: nothing to translate
        if isinstance(update, StatusUpdate) and update.status == "idle":
            self.idle_seen = True
            if self.on_idle is not None:
                self.on_idle()

    def on_event(self, event: SessionEvent) -> None:
        try:
            update = self._translator.translate(event)
        except Exception as error:  # surfaces in the iterator instead of the log
            self._fail(error)
            return
        if update is not None:
            self._put(update, seq=event.seq)

    # --- the buffer -------------------------------------------------------------------

    def _put(self, update: AgentUpdate, *, seq: int | None = None) -> None:
        if self.failure is not None:
            return
        last = self.pending[-1] if self.pending else None
        if isinstance(last, _GrowingDelta) and last.grows(update):
            last.add(update)
        elif len(self.pending) >= self.max_pending:
            session = self.agent.session
            resume = session.seq if seq is None else seq
            self._fail(
                StreamOverflowError(
                    f"the update stream of session {session.id!r} fell more than "
                    f"{self.max_pending} updates behind; events from seq {resume} on were "
                    "not delivered (reload the session and resume there)",
                    session_id=session.id,
                    seq=resume,
                    limit=self.max_pending,
                )
            )
            return
        elif self.merge_deltas and isinstance(update, TextDelta | ReasoningDelta):
            self.pending.append(_GrowingDelta(update))
        else:
            self.pending.append(update)
        self._wake()

    def _fail(self, error: BaseException) -> None:
        self.failure = error
        self.stop_observing()
        self._wake()

    def _wake(self) -> None:
        # A bare future rather than an asyncio.Event: one wake per update of a live
        # stream, and the event's waiter list and clear() cost a third of it.
        waiter = self.waiter
        if waiter is not None:
            self.waiter = None
            if not waiter.done():
                waiter.set_result(None)


class _GrowingDelta:
    """A buffered delta that later deltas of the same block extend while the consumer
    lags; the parts are joined once, when the consumer takes it."""

    __slots__ = ("_first", "_parts", "_seq")

    def __init__(self, first: TextDelta | ReasoningDelta) -> None:
        self._first = first
        self._parts = [first.text]
        self._seq = first.seq

    def grows(self, update: AgentUpdate) -> bool:
        first = self._first
        return (
            type(update) is type(first)
            and isinstance(update, TextDelta | ReasoningDelta)
            and (update.message_id, update.index) == (first.message_id, first.index)
        )

    def add(self, update: AgentUpdate) -> None:
        assert isinstance(update, TextDelta | ReasoningDelta)
        self._parts.append(update.text)
        self._seq = update.seq

    def build(self) -> TextDelta | ReasoningDelta:
        if len(self._parts) == 1:
            return self._first
        return replace(self._first, text="".join(self._parts), seq=self._seq)


class UpdateStream:
    """An async iterator of :data:`AgentUpdate`; see the module docstring. Use it
    with ``async for`` (optionally inside ``async with``)."""

    def __init__(self, buffer: _Buffer) -> None:
        self._buffer = buffer
        self._closed = False

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> AgentUpdate:
        buffer = self._buffer
        while not self._closed:
            if buffer.pending:
                item = buffer.pending.popleft()
                return item.build() if isinstance(item, _GrowingDelta) else item
            if buffer.failure is not None:
                failure, buffer.failure = buffer.failure, None
                self._close()
                raise failure
            if buffer.ended or (
                buffer.until_idle and buffer.idle_seen and buffer.agent.status == "idle"
            ):
                break
            if buffer.waiter is not None and not buffer.waiter.done():
                # One waiter is woken per update: a second would wait for ever.
                raise RuntimeError(
                    "another task is already waiting on this update stream; read it from "
                    "one task at a time"
                )
            buffer.waiter = asyncio.get_running_loop().create_future()
            await buffer.waiter
        self._close()
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Stop observing; later iteration ends at once. The agent is not affected."""
        self._close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._close()

    def _close(self) -> None:
        self._closed = True
        self._buffer.stop_observing()
        self._buffer.pending.clear()

    def __del__(self) -> None:
        # Dropped after ``break`` without aclose(): the observers must not outlive it.
        self._buffer.stop_observing()


def run_stream(
    agent: StreamedAgent,
    message: RunPrompt,
    *,
    max_pending: int = DEFAULT_MAX_PENDING,
    merge_deltas: bool = True,
) -> UpdateStream:
    """Subscribe to ``agent``, send ``message`` as a followup, and return the stream
    of updates until the agent is next idle. ``message`` is a ``UserMessage``, or text
    or content blocks from which one is created, as for :func:`~dsh_agent.run` (the
    stream's ``MessageQueued`` update carries it). A refused send (e.g. an id already
    delivered, or a prompt of another type) raises here, with nothing observed.
    ``merge_deltas=False`` keeps one delta per chunk while the buffer has room."""
    prompt = user_prompt(message, "stream")
    buffer = observe(agent, max_pending=max_pending, merge_deltas=merge_deltas, until_idle=True)
    try:
        agent.followup(prompt)
    except BaseException:
        buffer.stop_observing()
        raise
    return UpdateStream(buffer)


def observe(
    agent: StreamedAgent, *, max_pending: int, merge_deltas: bool, until_idle: bool
) -> _Buffer:
    """A buffer subscribed to ``agent`` from now on."""
    if max_pending < 1:
        raise ValueError(f"max_pending must be at least 1, not {max_pending}")
    buffer = _Buffer(agent, max_pending, merge_deltas, until_idle)
    buffer.unsubscribes.append(agent.session.subscribe(buffer.on_event))
    buffer.unsubscribes.append(agent.subscribe(buffer.on_live))
    return buffer


__all__ = [
    "DEFAULT_MAX_PENDING",
    "StreamedAgent",
    "UpdateStream",
    "observe",
    "run_stream",
]
