"""The part every provider adapter shares: open the SDK stream, translate its
events, and turn any failure into one terminal ``finish {error}`` chunk.

Only asyncio cancellation (and other ``BaseException``s) propagates. The first
``finish`` ends the stream: nothing is read or emitted after it. The SDK stream is
closed on every path, so a cancelled or abandoned call releases its connection.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

from dsh_llm._failure import LlmFailure
from dsh_llm._stream import ErrorFinish, FinishChunk, StreamChunk
from dsh_llm.failure_codes import INVALID_REQUEST, STREAM_CLOSED, stop_reason_code
from dsh_llm.providers._errors import (
    SdkErrors,
    _UnsupportedRequestError,
    failure_from_exception,
    translation_failure,
)
from dsh_llm.providers._transport_failures import (
    Endpoint,
    _FirstChunkTimeoutError,
    _StreamIdleError,
)

logger = logging.getLogger("dsh_llm.providers")

DEFAULT_IDLE_TIMEOUT = 120.0
"""Seconds a started stream may go without data before it ends in ``TIMEOUT``."""
DEFAULT_FIRST_CHUNK_TIMEOUT = 60.0
"""Seconds a request may wait for the first data of its response (the status line
included) before it ends in ``TIMEOUT`` (docs/decisions/2026-12-06-transport-timeouts.md)."""
DEFAULT_CONNECT_TIMEOUT = 10.0
"""Seconds the client may take to open a connection (TCP and TLS) before the call
ends in ``TIMEOUT``."""

EventT = TypeVar("EventT")
EventT_co = TypeVar("EventT_co", covariant=True)
EventT_contra = TypeVar("EventT_contra", contravariant=True)


class SdkStream(Protocol[EventT_co]):
    """What both official SDKs return for ``stream=True``."""

    def __aiter__(self) -> AsyncIterator[EventT_co]: ...

    async def close(self) -> None: ...


class EventTranslator(Protocol[EventT_contra]):
    """Turns one provider's stream events into dsh chunks."""

    @property
    def finished(self) -> bool:
        """Whether the provider has said all the response holds: reading stops."""
        ...

    def feed(self, event: EventT_contra) -> Iterable[StreamChunk]:
        """The chunks for one event, in order."""
        ...

    def end(self) -> Iterable[StreamChunk]:
        """The closing chunks once the provider's stream is exhausted, ending in
        ``finish`` (an error finish when the response was incomplete)."""
        ...


def error_finish(failure: LlmFailure) -> FinishChunk:
    """The terminal chunk of a failed call."""
    return FinishChunk(reason=ErrorFinish(failure=failure))


def stream_cut_short(missing: str) -> FinishChunk:
    """The finish of a stream that ended cleanly but before the model finished."""
    return error_finish(
        LlmFailure(
            message=f"the stream ended before the model finished ({missing})",
            code=STREAM_CLOSED,
        )
    )


def unknown_stop(reason: str | None) -> ErrorFinish:
    """The finish reason for a stop reason this adapter does not know."""
    return ErrorFinish(
        failure=LlmFailure(
            message=f"the model stopped for a reason this adapter does not know: {reason!r}",
            code=stop_reason_code(reason),
        )
    )


def checked_timeout(name: str, seconds: float | None) -> float | None:
    """An adapter's ``connect_timeout``, ``first_chunk_timeout`` or ``idle_timeout``
    argument: positive, finite seconds, or ``None`` for none."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise TypeError(f"{name} must be seconds (a number) or None, not {seconds!r}")
    if not 0 < seconds < math.inf:
        raise ValueError(f"{name} must be positive, finite seconds or None, not {seconds!r}")
    return float(seconds)


@dataclass(frozen=True, slots=True)
class StreamTimeouts:
    """An adapter's per-call timeouts, checked once when it is built, and how each of
    its calls streams under them: the same for every provider."""

    connect: float | None
    """``None`` too for a client of the caller's: its connect timeout is unknown."""
    first_chunk: float | None
    idle: float | None

    @classmethod
    def checked(
        cls, *, connect: float | None, first_chunk: float | None, idle: float | None
    ) -> StreamTimeouts:
        """The adapter arguments ``connect_timeout``, ``first_chunk_timeout`` and
        ``idle_timeout``, each refused unless positive, finite seconds or ``None``."""
        return cls(
            checked_timeout("connect_timeout", connect),
            checked_timeout("first_chunk_timeout", first_chunk),
            checked_timeout("idle_timeout", idle),
        )

    def for_callers_client(self) -> StreamTimeouts:
        """These timeouts for a client the caller built, whose connect timeout the
        adapter neither set nor knows."""
        return replace(self, connect=None)

    def stream(
        self,
        open_stream: Callable[[], Awaitable[SdkStream[EventT]]],
        translator: EventTranslator[EventT],
        sdk: SdkErrors,
        url: str,
    ) -> AsyncIterator[StreamChunk]:
        """One call to ``url``, opened by ``open_stream``; failures end in
        ``finish {error}`` (:func:`run_stream`)."""
        return run_stream(
            open_stream,
            translator,
            sdk,
            Endpoint(url, self.connect),
            idle_timeout=self.idle,
            first_chunk_timeout=self.first_chunk,
        )


class _Call:
    """One call's endpoint, and the deadline for its response's first data until
    that data arrives."""

    def __init__(self, endpoint: Endpoint, seconds: float | None) -> None:
        self.endpoint = endpoint
        self.seconds = seconds
        self.deadline = None if seconds is None else asyncio.get_running_loop().time() + seconds

    def arrived(self) -> None:
        self.deadline = None

    def error(self) -> _FirstChunkTimeoutError:
        assert self.seconds is not None
        return _FirstChunkTimeoutError(self.endpoint, self.seconds)


async def run_stream(
    open_stream: Callable[[], Awaitable[SdkStream[EventT]]],
    translator: EventTranslator[EventT],
    sdk: SdkErrors,
    endpoint: Endpoint,
    *,
    idle_timeout: float | None,
    first_chunk_timeout: float | None,
) -> AsyncIterator[StreamChunk]:
    """Yield the translated chunks of one provider call to ``endpoint``, ending in
    one ``finish``.

    ``first_chunk_timeout`` bounds the wait from the call to the response's first
    event; ``idle_timeout`` bounds the wait for each event once the response has
    begun. The SDKs swallow keep-alive comments and pings, so they restart neither."""
    call = _Call(endpoint, first_chunk_timeout)
    try:
        async with asyncio.timeout_at(call.deadline) as opening:
            stream = await open_stream()
    except _UnsupportedRequestError as error:
        yield error_finish(LlmFailure(message=str(error), code=INVALID_REQUEST))
        return
    except Exception as error:
        if isinstance(error, TimeoutError) and opening.expired():
            error = call.error()
        yield error_finish(failure_from_exception(error, sdk, endpoint, streaming=False))
        return
    try:
        events = aiter(stream)
        while not translator.finished:
            chunks = await _next_chunks(events, translator, sdk, idle_timeout, call)
            call.arrived()
            if chunks is None:
                break
            for chunk in chunks:
                yield chunk
                if isinstance(chunk, FinishChunk):
                    return
    finally:
        await _close(stream)
    try:
        ending = list(translator.end())
    except Exception as error:
        ending = [error_finish(translation_failure(error))]
    for chunk in ending:
        yield chunk


async def _next_chunks(
    events: AsyncIterator[EventT],
    translator: EventTranslator[EventT],
    sdk: SdkErrors,
    idle_timeout: float | None,
    call: _Call,
) -> list[StreamChunk] | None:
    """The chunks of the next event, ``None`` at the end of the stream, or an error
    finish when reading or translating the event failed."""
    try:
        event = await _next_event(events, idle_timeout, call)
    except Exception as error:
        return [error_finish(failure_from_exception(error, sdk, call.endpoint, streaming=True))]
    if event is None:
        return None
    try:
        return list(translator.feed(event))
    except Exception as error:
        return [error_finish(translation_failure(error))]


async def _next_event(
    events: AsyncIterator[EventT], idle_timeout: float | None, call: _Call
) -> EventT | None:
    """The next event, or ``None`` at the end; :class:`_StreamIdleError` when none
    comes within ``idle_timeout``, :class:`_FirstChunkTimeoutError` when the first
    one does not come by its deadline."""
    idle = None if idle_timeout is None else asyncio.get_running_loop().time() + idle_timeout
    first_due = call.deadline is not None and (idle is None or call.deadline < idle)
    try:
        async with asyncio.timeout_at(call.deadline if first_due else idle) as timer:
            return await anext(events, None)
    except TimeoutError:
        if timer.expired():
            if first_due:
                raise call.error() from None
            assert idle_timeout is not None
            raise _StreamIdleError(call.endpoint, idle_timeout) from None
        raise


async def _close(stream: SdkStream[EventT]) -> None:
    """Release the connection. The caller has its answer by now, so a failure to
    close is only logged."""
    try:
        await stream.close()
    except Exception:
        logger.warning("closing a provider stream failed", exc_info=True)


__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_FIRST_CHUNK_TIMEOUT",
    "DEFAULT_IDLE_TIMEOUT",
    "EventTranslator",
    "SdkStream",
    "StreamTimeouts",
    "checked_timeout",
    "error_finish",
    "run_stream",
    "stream_cut_short",
    "unknown_stop",
]
