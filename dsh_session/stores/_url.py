"""Open a store from a URL, so applications can take the backend from configuration.

Forms: ``sqlite:///relative.db``, ``sqlite:////absolute.db``, ``jsonl:///relative/dir``,
``jsonl:////absolute/dir``, ``memory://`` and ``postgresql://...`` (or ``postgres://``:
a libpq URL, passed to :class:`PostgresSessionStore` as it is). For the file stores the
path is what follows the third slash, so a fourth slash makes it absolute; it is
percent-decoded (strictly: every ``%`` starts two hex digits that decode to UTF-8).
Hosts, queries, fragments, control characters (``%00`` and NUL included) and empty
paths are refused rather than ignored or guessed at, so a typo never opens the wrong
file. The one exception is a ``jsonl:`` URL's query, which chooses the form of new
sessions: ``?compression=zstd|none`` and ``&pack_chunks=true|false`` (unknown keys and
values are refused too).

A URL builds the backend's one class with the same ``mode``, so ``open_store`` and the
class agree on everything: a ``sqlite:`` URL is :class:`SqliteSessionStore` (a new
database in the harness's schema 17, an existing one in the layout it holds), a
``jsonl:`` URL is :class:`JsonlSessionStore` (the harness's per-session folders beside
the flat ``<id>.jsonl`` files of earlier dsh)
(docs/decisions/2026-12-04-one-store-class-per-backend.md).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from dsh_session.errors import StoreUrlError
from dsh_session.stores._base import SessionStore, StoreMode
from dsh_session.stores._jsonl import JsonlSessionStore
from dsh_session.stores._jsonl_form import COMPRESSIONS
from dsh_session.stores._memory import MemorySessionStore
from dsh_session.stores._sqlite import SqliteSessionStore

_FORMS = (
    "sqlite:///path.db, jsonl:///path/dir, memory:// (four slashes for an absolute path) "
    "or postgresql://host/database"
)

_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def open_store(url: str, *, mode: StoreMode = "create") -> SessionStore:
    """Build the store a URL names. ``mode`` is passed to the backend: ``"create"``
    creates missing folders, files and tables; ``"open"`` and ``"read"`` require an
    existing store and create nothing (``memory://`` is always a new, empty store)."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        raise StoreUrlError(url, f"no scheme; expected {_FORMS}")
    if _CONTROL.search(url):
        raise StoreUrlError(url, "control characters are not allowed")
    if not url.isascii() and not _is_utf8(url):
        raise StoreUrlError(url, "it holds a lone surrogate, which names no file")
    if scheme == "memory":
        if rest:
            raise StoreUrlError(url, "memory:// takes no path")
        return MemorySessionStore()
    if scheme in ("postgresql", "postgres"):
        from dsh_session.stores.postgres import PostgresSessionStore

        return PostgresSessionStore(url, mode=mode)
    if scheme not in ("sqlite", "jsonl"):
        raise StoreUrlError(url, f"unknown scheme {scheme!r}; expected {_FORMS}")
    if not rest.startswith("/"):
        raise StoreUrlError(url, f"names a host; expected {_FORMS}")
    if "#" in rest:
        raise StoreUrlError(url, "fragments are not supported")
    rest, _, query = rest.partition("?")
    if query and scheme != "jsonl":
        raise StoreUrlError(url, "queries are supported only for jsonl: URLs")
    options = _jsonl_options(url, query)
    path = _decode(url, rest[1:])
    if not path.strip("/"):
        raise StoreUrlError(url, f"has no path; expected {_FORMS}")
    if scheme == "sqlite":
        if path.endswith("/"):
            raise StoreUrlError(url, "a sqlite path names a file, not a folder")
        return SqliteSessionStore(path, mode=mode)
    return JsonlSessionStore(path, mode=mode, **options)


def _jsonl_options(url: str, query: str) -> dict[str, Any]:
    """``compression`` and ``pack_chunks`` from a jsonl: URL's query."""
    options: dict[str, Any] = {}
    for item in query.split("&") if query else []:
        key, separator, value = item.partition("=")
        if key in options:
            raise StoreUrlError(url, f"query parameter {key!r} is given twice")
        if key == "compression" and separator and value in COMPRESSIONS:
            options[key] = value
        elif key == "pack_chunks" and separator and value in ("true", "false"):
            options[key] = value == "true"
        elif key in ("compression", "pack_chunks"):
            allowed = "zstd or none" if key == "compression" else "true or false"
            raise StoreUrlError(url, f"query parameter {key} must be {allowed}, not {value!r}")
        else:
            raise StoreUrlError(
                url,
                f"unknown query parameter {key!r} (jsonl: queries take compression "
                "and pack_chunks)",
            )
    return options


def _decode(url: str, encoded: str) -> str:
    if _BAD_PERCENT.search(encoded):
        raise StoreUrlError(url, "'%' must start two hex digits (write %25 for a '%')")
    try:
        path = unquote(encoded, errors="strict")
    except UnicodeDecodeError:
        raise StoreUrlError(url, "percent escapes do not decode to UTF-8") from None
    if _CONTROL.search(path):
        raise StoreUrlError(url, "the decoded path holds control characters (such as %00)")
    return path


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


__all__ = [
    "open_store",
]
