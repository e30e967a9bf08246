"""Base URLs: checked when an adapter is built, and shown safely in failures.

A base URL with no scheme, another scheme than ``http``/``https`` or no host is
refused at construction (:class:`~dsh_llm.errors.BaseUrlError`) rather than failing
at the first request with the SDK's words. A URL shown in a failure keeps only
``scheme://host:port/path``: credentials and query strings (where some gateways
carry a key) never reach a message or the log.

No SDK is imported here, so the check runs before any client is built.
"""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

from dsh_llm.errors import BaseUrlError

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _parts(url: str) -> SplitResult:
    """``url`` split, its port parsed (``urlsplit`` parses it lazily); ``ValueError``
    when it does not parse."""
    split = urlsplit(url)
    _ = split.port
    return split


def base_url_problem(url: object) -> str | None:
    """Why ``url`` cannot be a base URL, or ``None`` when it can: an ``http://`` or
    ``https://`` URL with a host, a valid port and no spaces or control characters."""
    if not isinstance(url, str):
        return f"a base URL is a str, not {type(url).__name__}"
    if not url:
        return "it is empty"
    if any(character.isspace() or not character.isprintable() for character in url):
        return "it holds a space or a control character"
    try:
        split = _parts(url)
    except ValueError as error:
        return f"it does not parse as a URL ({error.args[0] if error.args else 'malformed'})"
    if "://" not in url:
        hint = "" if url.startswith(("http:", "https:")) else f": did you mean 'http://{url}'?"
        return f"it has no scheme (http:// or https://){hint}"
    if split.scheme not in _DEFAULT_PORTS:
        return f"its scheme {split.scheme!r} is not http or https"
    if not split.hostname:
        return "it names no host"
    return None


def checked_base_url(url: str | None, *, source: str = "base_url") -> str | None:
    """``url`` when it is a usable base URL (``None`` stays ``None``: the provider's
    default); else a :class:`~dsh_llm.errors.BaseUrlError` naming ``source`` (the
    argument or environment variable it came from) and the value shown safely."""
    if url is None:
        return None
    problem = base_url_problem(url)
    if problem is None:
        return url
    raise BaseUrlError(
        f"{source} {shown_value(url)} is not a usable base URL: {problem}",
        base_url=url,
        source=source,
    )


def shown_value(url: object) -> str:
    """``url`` as an error names it: its ``repr``, with any ``user:password@`` part
    masked when it parses far enough to find one."""
    if not isinstance(url, str):
        return repr(url)
    scheme, separator, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    if separator and "@" in authority:
        url = f"{scheme}://***@{authority.rpartition('@')[2]}{slash}{path}"
    return repr(url)


def shown_url(url: str) -> str:
    """``scheme://host:port/path`` of ``url`` (the port always written), without
    credentials, query or fragment: the form failures name. A URL that does not
    parse is shown as ``<unparsable URL>``."""
    try:
        split = _parts(url)
    except ValueError:
        return "<unparsable URL>"
    host = split.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = split.port or _DEFAULT_PORTS.get(split.scheme)
    authority = host if port is None else f"{host}:{port}"
    return f"{split.scheme}://{authority}{split.path}"


def endpoint_url(client: object, path: str) -> str:
    """The shown URL of ``path`` under an SDK client's ``base_url``, e.g.
    ``http://127.0.0.1:8080/v1/chat/completions``. A client of the caller's own may
    hold anything there, so one that cannot say is shown as ``<unknown URL>`` rather
    than failing the call."""
    try:
        base = str(client.base_url)  # type: ignore[attr-defined]
    except Exception:  # a foreign attribute or __str__ may raise anything
        return "<unknown URL>"
    return shown_url(f"{base.rstrip('/')}/{path.lstrip('/')}")


__all__ = [
    "base_url_problem",
    "checked_base_url",
    "endpoint_url",
    "shown_url",
    "shown_value",
]
