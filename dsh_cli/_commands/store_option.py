"""``--store``: what the user typed, the store it names, and how errors name it.

The option takes a store URL (``sqlite:///dsh.db``, ``jsonl:///logs``, ``memory://``,
``postgresql://...``) or a bare path, read by these rules (docs/cli.md):

- an existing folder is a JSONL store root;
- an existing file is a SQLite database, and so is a new path ending in ``.db``,
  ``.sqlite`` or ``.sqlite3``;
- any other new path is a JSONL store root.

Every error a command prints names the store as it was typed, with any password
masked, never the library's ``SqliteSessionStore('...')`` or a converted libpq DSN
(:func:`named_as_typed`, applied where failures and warnings are printed).
"""

from __future__ import annotations

import re
from pathlib import Path

from dsh_cli._errors import StoreOptionError
from dsh_session.stores import (
    JsonlSessionStore,
    SessionStore,
    SqliteSessionStore,
    StoreMode,
    StoreNotFoundError,
    StoreUrlError,
    open_store,
)

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
"""A new bare path with one of these suffixes is a SQLite database."""

POSTGRES_EXTRA = "pip install 'dsh-sdk[postgres]'"
POSTGRES_SCHEMES = ("postgresql", "postgres")

_LIBRARY_NAME = re.compile(
    r"\b(?:Sqlite|Jsonl|Memory|Postgres)SessionStore"
    r"\((?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|<[^>]*>)\)"
)
"""How the library names a store in its messages: its class and location."""
_URL_PASSWORD = re.compile(r"(://[^/@:]*:)[^/@]*@")
_DSN_PASSWORD = re.compile(r"(password=)[^&\s]*", re.IGNORECASE)


def shown_store(typed: str) -> str:
    """``typed`` as output may show it: a password in it replaced by ``***``."""
    return _DSN_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", typed))


def is_url(typed: str) -> bool:
    return "://" in typed


def store_for(typed: str, mode: StoreMode) -> SessionStore:
    """The store ``typed`` names (a URL or a bare path), opened with ``mode``."""
    if not is_url(typed):
        return _store_at_path(typed, mode)
    try:
        return open_store(typed, mode=mode)
    except StoreUrlError as error:
        raise StoreOptionError(f"--store {shown_store(typed)}: {_problem(error)}") from error
    except ImportError as error:  # the PostgreSQL store's driver is an optional extra
        if typed.partition("://")[0] not in POSTGRES_SCHEMES:
            raise
        cause = error.__cause__ or error
        raise StoreOptionError(
            f"--store {shown_store(typed)}: the PostgreSQL store needs the 'postgres' "
            f"extra ({cause}): {POSTGRES_EXTRA}"
        ) from error


def _problem(error: StoreUrlError) -> str:
    """The URL error's reason, without the URL it repeats (converted by the library)."""
    return str(error).removeprefix(f"store url {error.url!r}: ")


def _store_at_path(typed: str, mode: StoreMode) -> SessionStore:
    if not typed.strip():
        raise StoreOptionError("--store takes a store URL or a path, not an empty string")
    path = Path(typed)
    if path.is_dir():
        return JsonlSessionStore(path, mode=mode)
    if path.exists() or path.suffix.lower() in SQLITE_SUFFIXES:
        return SqliteSessionStore(path, mode=mode)
    return JsonlSessionStore(path, mode=mode)


def named_as_typed(message: str, typed: str, error: BaseException | None = None) -> str:
    """``message`` (about ``error``, a failure with the store ``typed`` names, or a
    warning) with the library's names for the store (``SqliteSessionStore('dsh.db')``,
    a converted libpq DSN, the path a missing store was looked for at) replaced by
    the store as typed, its password masked wherever it appears."""
    shown = shown_store(typed)
    if isinstance(error, StoreNotFoundError):
        message = message.replace(f"at {error.location}:", f"at {shown}:", 1)
    return _LIBRARY_NAME.sub(lambda _: shown, message).replace(typed, shown)


__all__ = [
    "POSTGRES_EXTRA",
    "POSTGRES_SCHEMES",
    "SQLITE_SUFFIXES",
    "is_url",
    "named_as_typed",
    "shown_store",
    "store_for",
]
