"""Which API key an adapter sends: the caller's, the provider's environment variable,
a placeholder for a server on this machine, or a :class:`MissingApiKeyError`.

No SDK is imported here, so the check runs before any client is built.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from dsh_llm.errors import MissingApiKeyError

NO_KEY = "no-key"
"""Sent to a loopback server when no key is configured: the SDKs refuse to build a
client without one, and a local server ignores it. It is not a secret."""


def is_loopback(url: str | None) -> bool:
    """Whether ``url``'s host is this machine: ``localhost`` (or a name under it),
    an address in 127.0.0.0/8, or ``::1``. A URL that does not parse is not."""
    if not url:
        return False
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_api_key(
    *, api_key: str | None, variable: str, base_url: str | None, provider: str
) -> str:
    """The key to send: ``api_key``, else ``$variable``, else :data:`NO_KEY` when
    ``base_url`` is a loopback server; else a :class:`MissingApiKeyError` naming
    ``variable``."""
    if api_key:
        return api_key
    from_environment = os.environ.get(variable)
    if from_environment:
        return from_environment
    if is_loopback(base_url):
        return NO_KEY
    where = base_url or f"{provider}'s hosted API"
    raise MissingApiKeyError(
        f"no API key for {provider} at {where}: set {variable} or pass api_key=... "
        "(a server on 127.0.0.1, localhost or ::1 needs none)",
        variable=variable,
        provider=provider,
    )


__all__ = ["NO_KEY", "is_loopback", "resolve_api_key"]
