"""Persistence backends for sessions: write-behind, flushed at checkpoints.

One class per backend: ``SqliteSessionStore`` (the embedded default: one database
file, created in the TypeScript harness's schema 17; databases in dsh's earlier
layout 1 are read and appended to as well), ``JsonlSessionStore`` (a store root in the
harness's folder layout; earlier dsh's flat ``<session-id>.jsonl`` files too),
``MemorySessionStore`` (tests), ``PostgresSessionStore`` (many processes and machines
on one database; imported on first use, it needs the ``postgres`` extra), and
``open_store(url)`` to pick one from configuration.
"""

from typing import TYPE_CHECKING

from dsh_session.errors import (
    AmbiguousSessionIdError,
    NotARegularFileError,
    SessionConflictError,
    SessionNotFoundError,
    StoreNotFoundError,
    StoreUrlError,
)
from dsh_session.stores._attachments import AttachmentLimits
from dsh_session.stores._base import SessionStore, StoreMode, StoreStats
from dsh_session.stores._jsonl import JsonlSessionStore
from dsh_session.stores._memory import MemorySessionStore
from dsh_session.stores._recovery import LoadReport, TornTail
from dsh_session.stores._sqlite import SqliteSessionStore
from dsh_session.stores._url import open_store

if TYPE_CHECKING:
    from dsh_session.stores.postgres import PostgresSessionStore


def __getattr__(name: str) -> object:
    """Import the PostgreSQL store (and psycopg) only when it is asked for."""
    if name == "PostgresSessionStore":
        from dsh_session.stores.postgres import PostgresSessionStore

        return PostgresSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AmbiguousSessionIdError",
    "AttachmentLimits",
    "JsonlSessionStore",
    "LoadReport",
    "MemorySessionStore",
    "NotARegularFileError",
    "PostgresSessionStore",
    "SessionConflictError",
    "SessionNotFoundError",
    "SessionStore",
    "SqliteSessionStore",
    "StoreMode",
    "StoreNotFoundError",
    "StoreStats",
    "StoreUrlError",
    "TornTail",
    "open_store",
]
