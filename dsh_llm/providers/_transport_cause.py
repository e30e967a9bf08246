"""What actually went wrong under an SDK's "Connection error.": the cause found in
the exception's chain.

The SDKs wrap every transport failure in one connection (or timeout) error whose own
text says nothing; the facts sit further down its ``__cause__`` / ``__context__``
chain: an HTTP client's ``ConnectTimeout`` or ``RemoteProtocolError``, a
``socket.gaierror``, an ``ssl.SSLError``, an ``OSError`` with its errno. The HTTP
client's classes are recognised by name (``httpx``, ``httpx2`` and ``httpcore``
spell them alike, and none is imported here); the rest are the standard library's.
Every text taken from a foreign exception goes through
:func:`~dsh_llm._failure.describe_exception`, so a ``__str__`` that raises cannot
break the report.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from typing import NamedTuple

from dsh_llm._failure import describe_exception

CONNECTION_REFUSED = "connection refused"
DNS_FAILURE = "DNS resolution failed"
TLS_FAILURE = "TLS failure"
CONNECT_TIMEOUT = "connect timeout"
READ_TIMEOUT = "read timeout"
CONNECTION_RESET = "connection reset"
CONNECTION_CLOSED = "connection closed by the server"

_CHAIN_LIMIT = 32
"""Links followed at most: a chain is short, but a cyclic one must still end."""

_TIMEOUTS_BY_NAME = {
    "ConnectTimeout": CONNECT_TIMEOUT,
    "ReadTimeout": READ_TIMEOUT,
    "WriteTimeout": READ_TIMEOUT,
    "PoolTimeout": CONNECT_TIMEOUT,
}
"""The HTTP clients' timeout classes (httpx, httpx2, httpcore): which wait ran out."""


class TransportCause(NamedTuple):
    """The classified cause of a transport failure."""

    kind: str
    """One of the constants above, e.g. :data:`CONNECTION_REFUSED`."""
    detail: str
    """The underlying exception's own words (``""`` when it has none), e.g.
    ``[Errno -2] Name or service not known``."""
    hint: str = ""
    """A likely explanation, when the cause suggests one."""


def exception_chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and the exceptions it was raised from or while handling, outermost
    first; each at most once."""
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen and len(seen) < _CHAIN_LIMIT:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def transport_cause(error: BaseException) -> TransportCause | None:
    """The cause of a transport failure, or ``None`` when the chain holds none this
    module knows. A timeout of the HTTP client wins over what it interrupted (a TLS
    handshake cut by the connect timeout is a connect timeout)."""
    chain = list(exception_chain(error))
    for link in chain:
        kind = _timeout_kind(link)
        if kind is not None:
            return TransportCause(kind, "")
    for link in chain:
        cause = _os_cause(link)
        if cause is not None:
            return cause
    for link in chain:
        if _named(link, "RemoteProtocolError"):
            return TransportCause(CONNECTION_CLOSED, _detail(link))
    return None


def innermost(error: BaseException) -> BaseException:
    """The deepest exception of ``error``'s chain: the one nearest the wire."""
    *_, last = exception_chain(error)
    return last


def _timeout_kind(link: BaseException) -> str | None:
    for cls in type(link).__mro__:
        kind = _TIMEOUTS_BY_NAME.get(cls.__name__)
        if kind is not None:
            return kind
    return None


def _os_cause(link: BaseException) -> TransportCause | None:
    """The cause an operating-system or TLS exception names."""
    if isinstance(link, socket.gaierror):
        return TransportCause(DNS_FAILURE, _detail(link))
    if isinstance(link, ssl.SSLWantReadError | ssl.SSLWantWriteError):
        return None  # a handshake still in progress when something else ended it
    if isinstance(link, ssl.SSLError):
        reason = getattr(link, "reason", None)
        hint = "is it a plain http:// server?" if reason == "WRONG_VERSION_NUMBER" else ""
        return TransportCause(TLS_FAILURE, _detail(link), hint)
    if isinstance(link, ConnectionRefusedError):
        return TransportCause(CONNECTION_REFUSED, _detail(link), "is the server running?")
    if isinstance(link, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        return TransportCause(CONNECTION_RESET, _detail(link))
    return None


def _named(link: BaseException, name: str) -> bool:
    return any(cls.__name__ == name for cls in type(link).__mro__)


def _detail(link: BaseException) -> str:
    return describe_exception(link, with_type=False)


__all__ = [
    "CONNECTION_CLOSED",
    "CONNECTION_REFUSED",
    "CONNECTION_RESET",
    "CONNECT_TIMEOUT",
    "DNS_FAILURE",
    "READ_TIMEOUT",
    "TLS_FAILURE",
    "TransportCause",
    "exception_chain",
    "innermost",
    "transport_cause",
]
