"""Ollama through its OpenAI-compatible endpoint: where ``ollama:MODEL`` connects.

``ollama:MODEL`` is an :class:`~dsh_llm.providers.OpenAIChatAdapter` with
``provider="ollama"`` talking to ``OLLAMA_HOST``'s ``/v1`` (default
``http://127.0.0.1:11434/v1``), as docs/decisions/2026-12-06-ollama-path.md
explains. ``OLLAMA_HOST`` is read as Ollama's own clients read it: a bare host,
``host:port``, ``:port`` or a full URL; the scheme defaults to ``http`` and the port
to 11434 unless the URL names a scheme without a port. No SDK is imported here.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from dsh_llm.errors import BaseUrlError
from dsh_llm.providers._endpoint import base_url_problem, shown_value

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 11434
KEY_PLACEHOLDER = "ollama"
"""Sent as the API key when none is configured: Ollama ignores it (its documentation
passes this very value), and the OpenAI client refuses to be built without one."""


def ollama_base_url() -> str:
    """The ``/v1`` URL of the Ollama server ``OLLAMA_HOST`` names; raises
    :class:`~dsh_llm.errors.BaseUrlError` naming ``OLLAMA_HOST`` when it is unusable."""
    host = os.environ.get("OLLAMA_HOST", "").strip()
    has_scheme = "://" in host
    try:
        split = urlsplit(host if has_scheme else f"http://{host}")
        port = split.port
    except ValueError as error:
        raise _refused(host, f"it does not parse ({error})") from None
    if port is None and not has_scheme:
        port = DEFAULT_PORT
    name = split.hostname or DEFAULT_HOST
    if ":" in name:
        name = f"[{name}]"
    authority = name if port is None else f"{name}:{port}"
    path = split.path.rstrip("/")
    url = f"{split.scheme}://{authority}{path}/v1"
    problem = base_url_problem(url)
    if problem is not None:
        raise _refused(host, f"{url!r}: {problem}")
    return url


def _refused(host: str, why: str) -> BaseUrlError:
    return BaseUrlError(
        f"OLLAMA_HOST {shown_value(host)} does not name a usable Ollama server: {why}",
        base_url=host,
        source="OLLAMA_HOST",
    )


def ollama_api_key() -> str:
    """``OLLAMA_API_KEY`` (for a server behind an authenticating proxy, or Ollama's
    cloud), else the placeholder Ollama ignores."""
    return os.environ.get("OLLAMA_API_KEY") or KEY_PLACEHOLDER


__all__ = ["DEFAULT_PORT", "KEY_PLACEHOLDER", "ollama_api_key", "ollama_base_url"]
