"""The part every provider adapter shares: open the SDK stream, translate its
events, and turn any failure into one terminal ``finish {error}`` chunk.

Only asyncio cancellation (and other ``BaseException``s) propagates; the SDK
stream is closed on every path, so a cancelled or abandoned call releases its
connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Protocol, TypeVar

from dsh_llm.providers._errors import (
    INVALID_REQUEST,
    PROVIDER_ERROR,
    STREAM_INTERRUPTED,
    SdkErrors,
    UnsupportedRequestError,
    failure_from_exception,
)
from dsh_llm.stream import ErrorFinish, FinishChunk, LlmFailure, StreamChunk

EventT = TypeVar("EventT")
EventT_co = TypeVar("EventT_co", covariant=True)
EventT_contra = TypeVar("EventT_contra", contravariant=True)


class SdkStream(Protocol[EventT_co]):
    """What both official SDKs return for ``stream=True``."""

    def __aiter__(self) -> AsyncIterator[EventT_co]: ...

    async def close(self) -> None: ...


class EventTranslator(Protocol[EventT_contra]):
    """Turns one provider's stream events into dsh chunks."""

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
            code=STREAM_INTERRUPTED,
        )
    )


def unknown_stop(reason: str | None) -> ErrorFinish:
    """The finish reason for a stop reason this adapter does not know."""
    return ErrorFinish(
        failure=LlmFailure(
            message=f"the model stopped for a reason this adapter does not know: {reason!r}",
            code=PROVIDER_ERROR,
        )
    )


async def run_stream(
    open_stream: Callable[[], Awaitable[SdkStream[EventT]]],
    translator: EventTranslator[EventT],
    sdk: SdkErrors,
) -> AsyncIterator[StreamChunk]:
    """Yield the translated chunks of one provider call, ending in ``finish``."""
    try:
        stream = await open_stream()
    except UnsupportedRequestError as error:
        yield error_finish(LlmFailure(message=str(error), code=INVALID_REQUEST))
        return
    except Exception as error:
        yield error_finish(failure_from_exception(error, sdk, streaming=False))
        return
    try:
        async for event in stream:
            for chunk in translator.feed(event):
                yield chunk
    except Exception as error:
        yield error_finish(failure_from_exception(error, sdk, streaming=True))
        return
    finally:
        await stream.close()
    for chunk in translator.end():
        yield chunk
