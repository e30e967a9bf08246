"""Which mailbox a store has: one form per backend, beside the log it never writes."""

from __future__ import annotations

import weakref
from pathlib import Path

from dsh_session._harness_format import find_session
from dsh_session._header import SessionId
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._jsonl import FILE_NAME, FLAT_SUFFIX, JsonlMailbox
from dsh_session._mailbox._memory import MemoryMailbox
from dsh_session._mailbox._sqlite import SqliteMailbox, companion_path
from dsh_session.errors import StoreError
from dsh_session.stores._base import SessionStore
from dsh_session.stores._jsonl import JsonlSessionStore
from dsh_session.stores._memory import MemorySessionStore
from dsh_session.stores._sqlite import SqliteSessionStore
from dsh_session.stores._sqlite_layout_one import DshLayout

_MEMORY: weakref.WeakKeyDictionary[SessionStore, MemoryMailbox] = weakref.WeakKeyDictionary()
"""A memory store's mailbox lives as long as the store object."""


def open_mailbox(store: SessionStore) -> Mailbox:
    """The mailbox of ``store``'s sessions: a table in dsh's SQLite layout 1 and in
    PostgreSQL, a companion file beside a harness schema-17 database, a file in each
    session's folder for JSONL, and a per-store object for memory. Close it when done."""
    if isinstance(store, SqliteSessionStore):
        own_file = isinstance(store._layout, DshLayout)
        return SqliteMailbox(store.path if own_file else companion_path(store.path))
    if isinstance(store, JsonlSessionStore):
        return JsonlMailbox(store.directory, lambda sid: _jsonl_file(store, sid))
    if isinstance(store, MemorySessionStore):
        return _MEMORY.setdefault(store, MemoryMailbox())
    if type(store).__name__ == "PostgresSessionStore":  # imported only when in use
        from dsh_session.stores.postgres._mailbox import PostgresMailbox

        return PostgresMailbox(getattr(store, "dsn"), repr(store))  # noqa: B009
    raise StoreError(f"{store!r} has no mailbox: deliveries need a dsh store backend")


def _jsonl_file(store: JsonlSessionStore, session_id: SessionId) -> Path:
    folder = find_session(store.directory, session_id)
    if folder is None:
        return store.directory / f"{session_id}{FLAT_SUFFIX}"
    return folder.path.parent / FILE_NAME


__all__ = ["open_mailbox"]
