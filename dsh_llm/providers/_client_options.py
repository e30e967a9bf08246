"""What both adapters decide before building their SDK client: the base URL
(checked, from the argument or the SDK's environment variable) and the client's
timeouts (the SDK's, with dsh's connect timeout).

No SDK is imported here; the adapters pass their SDK's ``Timeout`` class in.
"""

from __future__ import annotations

import os
from typing import Any, Protocol

from dsh_llm.providers._endpoint import checked_base_url


class _SdkTimeout(Protocol):
    """An SDK's ``Timeout`` (``httpx.Timeout`` re-exported): one bound per phase."""

    read: float | None
    write: float | None
    pool: float | None


def chosen_base_url(base_url: str | None, variable: str) -> str | None:
    """``base_url``, else ``$variable`` (which the SDK would read too), else
    ``None`` (the provider's default), checked either way: a value that is not an
    ``http(s)://`` URL with a host raises :class:`~dsh_llm.errors.BaseUrlError`
    naming where it came from."""
    if base_url is not None:
        return checked_base_url(base_url)
    return checked_base_url(os.environ.get(variable), source=variable)


def client_timeout(
    timeout_class: type[Any],
    default: _SdkTimeout,
    *,
    timeout: float | None,
    connect_timeout: float | None,
) -> Any:
    """The SDK client's timeout: ``timeout`` for each network operation (the SDK's
    ``default`` when ``None``), except opening a connection, which gets
    ``connect_timeout`` (``None``: no limit)."""
    phases: _SdkTimeout = default if timeout is None else timeout_class(timeout)
    return timeout_class(
        connect=connect_timeout, read=phases.read, write=phases.write, pool=phases.pool
    )


__all__ = ["chosen_base_url", "client_timeout"]
