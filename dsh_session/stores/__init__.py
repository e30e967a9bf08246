"""Persistence backends for sessions: write-behind, flushed at checkpoints.

``SqliteSessionStore`` (the embedded default), ``JsonlSessionStore`` (one
``<session-id>.jsonl`` file per session, the TypeScript harness's format),
``HarnessSqliteSessionStore`` (the TypeScript harness's schema-17 database),
``MemorySessionStore`` (tests), and ``open_store(url)`` to pick one from configuration.
"""

from dsh_session.errors import SessionConflictError
from dsh_session.stores._regular_file import NotARegularFileError
from dsh_session.stores.base import (
    SessionNotFoundError,
    SessionStore,
    StoreMode,
    StoreNotFoundError,
    StoreStats,
)
from dsh_session.stores.harness_sqlite import HarnessSqliteSessionStore
from dsh_session.stores.jsonl import JsonlSessionStore
from dsh_session.stores.memory import MemorySessionStore
from dsh_session.stores.recovery import LoadReport, TornTail
from dsh_session.stores.sqlite import SqliteSessionStore
from dsh_session.stores.url import StoreUrlError, open_store

__all__ = [
    "HarnessSqliteSessionStore",
    "JsonlSessionStore",
    "LoadReport",
    "MemorySessionStore",
    "NotARegularFileError",
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
