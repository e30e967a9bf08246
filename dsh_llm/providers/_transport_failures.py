"""Transport failures that say what happened: the endpoint's URL, the cause
(connection refused, DNS, TLS, reset) and, for a timeout, which one fired and the
adapter argument that sets it.

An adapter describes its endpoint as an :class:`Endpoint` per call; the classifier
in :mod:`dsh_llm.providers._errors` hands every connection or timeout error here.
"""

from __future__ import annotations

from typing import NamedTuple

from dsh_llm._failure import LlmFailure, describe_exception
from dsh_llm.errors import LlmError
from dsh_llm.failure_codes import TIMEOUT, TRANSPORT
from dsh_llm.providers._transport_cause import (
    CONNECT_TIMEOUT,
    CONNECTION_CLOSED,
    CONNECTION_RESET,
    READ_TIMEOUT,
    TransportCause,
    innermost,
    transport_cause,
)


class Endpoint(NamedTuple):
    """Where one adapter call goes, as failures name it."""

    url: str
    """``scheme://host:port/path`` of the request: no credentials, no query."""
    connect_timeout: float | None = None
    """The connect timeout the adapter gave its client (``None``: unknown, e.g. a
    client the caller built, or no limit)."""


class _StreamIdleError(LlmError):
    """The stream stayed open without data (keep-alive comments are not data) for
    ``idle_timeout`` seconds."""

    def __init__(self, endpoint: Endpoint, idle_timeout: float) -> None:
        message = (
            f"idle timeout: the provider at {endpoint.url} sent no data for "
            f"{idle_timeout:g} s (idle_timeout; keep-alive comments do not count)"
        )
        super().__init__(message, failure=LlmFailure(message=message, code=TIMEOUT))
        self.idle_timeout = idle_timeout


class _FirstChunkTimeoutError(LlmError):
    """No data of the response (not even its status line) came within
    ``first_chunk_timeout`` seconds of the request."""

    def __init__(self, endpoint: Endpoint, first_chunk_timeout: float) -> None:
        message = (
            f"first-chunk timeout: the provider at {endpoint.url} sent no response "
            f"within {first_chunk_timeout:g} s of the request (first_chunk_timeout)"
        )
        super().__init__(message, failure=LlmFailure(message=message, code=TIMEOUT))
        self.first_chunk_timeout = first_chunk_timeout


def transport_failure(
    error: BaseException, endpoint: Endpoint, *, streaming: bool, timed_out: bool
) -> LlmFailure:
    """The failure for a connection or timeout error. Before the stream begins, a
    connect timeout or a read timeout is ``TIMEOUT`` and every other cause
    ``TRANSPORT``; once it has begun, any of them is an interruption (``TRANSPORT``),
    as the harness's adapter reports it."""
    cause = transport_cause(error)
    because = _because(error, cause, endpoint)
    if streaming:
        return LlmFailure(
            message=f"the stream from {endpoint.url} broke off before the model finished: "
            f"{because}",
            code=TRANSPORT,
        )
    kind = None if cause is None else cause.kind
    if timed_out or kind in (CONNECT_TIMEOUT, READ_TIMEOUT):
        verb = "connect to" if kind == CONNECT_TIMEOUT else "get an answer from"
        return LlmFailure(message=f"could not {verb} {endpoint.url}: {because}", code=TIMEOUT)
    if kind in (CONNECTION_RESET, CONNECTION_CLOSED):
        what = f"the connection to {endpoint.url} broke off before the response"
    else:
        what = f"could not {'reach' if kind is None else 'connect to'} {endpoint.url}"
    return LlmFailure(message=f"{what}: {because}", code=TRANSPORT)


def _because(error: BaseException, cause: TransportCause | None, endpoint: Endpoint) -> str:
    """The cause in words: its kind, the underlying exception's words, a hint."""
    if cause is None:
        deepest = innermost(error)
        shown = describe_exception(error)
        return shown if deepest is error else f"{shown} ({describe_exception(deepest)})"
    if cause.kind == CONNECT_TIMEOUT:
        within = (
            "" if endpoint.connect_timeout is None else f" within {endpoint.connect_timeout:g} s"
        )
        return f"{CONNECT_TIMEOUT}: no connection{within} (connect_timeout)"
    if cause.kind == READ_TIMEOUT:
        return f"{READ_TIMEOUT}: the client's timeout for one read ran out (timeout)"
    parts = [cause.kind]
    if cause.detail:
        parts.append(f"({cause.detail})")
    if cause.hint:
        parts[-1] += f"; {cause.hint}"
    return " ".join(parts)


__all__ = ["Endpoint", "transport_failure"]
