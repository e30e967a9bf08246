"""SQLite store: the embedded default. One database file holds every session.

:class:`SqliteSessionStore` is the one SQLite store class. It opens whichever of two
table layouts the file holds (``_sqlite_layouts.py`` tells them apart by the file's
header, creating nothing) and hands its reads and writes to a private object for that
layout: the TypeScript harness's schema 17 (``harness_sqlite.py``), which is also what
a new file is created in (mode 0600), or dsh's own layout 1 (``_sqlite_layout_one.py``),
which earlier dsh created and which keeps loading and taking appends in its own form.
``open_store("sqlite:///...")`` builds this same class, so the two agree in every mode.

The database runs in WAL mode with ``synchronous=FULL``, so a committed transaction
survives a power cut, and each batch is one ``BEGIN IMMEDIATE`` transaction: after a
crash a batch is either all there or not at all. That is why, unlike JSONL, a gap or
an unreadable row is corruption here, never a torn tail.

One writer per session, twice over: a store holds the lock file
``<database>.<session-id>.lock`` from attach or load until detach or close, so a second
writer is refused while the first lives (``ownership.py``); and layout 1 claims a
writer epoch in ``dsh_session_writers`` (created by the first claim), which every batch
re-checks inside its own transaction (``writer_epochs.py``; schema 17 fences by
sequence instead). Readers take neither.

Only ``mode="create"`` creates the file, its folder and the tables (and adds layout 1's
tables to an existing database that has none of either layout). ``"open"`` and
``"read"`` first check that the file is a SQLite database holding one of the layouts
and refuse anything else before changing a byte (no WAL switch, no tables); ``"read"``
connects read-only, so SQLite itself refuses every write.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Literal

from dsh_session._header import SessionHeader, SessionId
from dsh_session._search import SearchHit, SearchQuery
from dsh_session.errors import (
    StoreError,
    StoreNotFoundError,
)
from dsh_session.events import LogEvent
from dsh_session.stores._base import INLINE_BATCH_LIMIT, Batch, SessionStore, StoreMode
from dsh_session.stores._blob_sqlite import SqliteBlobs, companion_path
from dsh_session.stores._harness_sqlite import HarnessLayout
from dsh_session.stores._recovery import StoredLog
from dsh_session.stores._sqlite_layout_one import DshLayout
from dsh_session.stores._sqlite_layouts import (
    Found,
    SqliteLayout,
    _LayoutChanged,
    find_layout,
)

_OPEN_ATTEMPTS = 5
"""Looks at a file that other processes are creating before giving up."""

_CREATE: dict[Found, Literal["file", "tables"]] = {"missing": "file", "empty": "tables"}
"""What a new store creates in schema 17: the file, or the tables of an empty one."""


class SqliteSessionStore(SessionStore):
    """Sessions in one SQLite database file, in the TypeScript harness's schema 17 or
    in dsh's earlier layout 1, whichever the file holds.

    With ``mode="create"`` (the default) a missing file (and its folder) is created in
    schema 17 with mode 0600, as the harness requires, so the harness can open it too;
    an existing file keeps its layout. With ``"open"`` or ``"read"`` the file must
    already hold one of the two layouts, and ``"read"`` opens it read-only. A file
    that is neither (not a SQLite database, another schema version, a folder) is
    refused in every mode with :class:`StoreNotFoundError` naming the path and what
    it holds, and nothing is created or changed.

    ``busy_timeout`` is how long a write waits for another connection's lock before
    it fails (and stays queued).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        mode: StoreMode = "create",
        busy_timeout: float = 5.0,
        inline_batch_limit: int = INLINE_BATCH_LIMIT,
    ) -> None:
        super().__init__(inline_batch_limit=inline_batch_limit)
        self.path = Path(path)
        """The database file."""
        self.read_only = mode == "read"
        self._busy_timeout = busy_timeout
        self._layout = self._open_layout(mode, busy_timeout)
        self._attachments: SqliteBlobs | None = None
        """Attachment bytes: table ``dsh_attachments`` (opened on first use)."""

    def _open_layout(self, mode: StoreMode, busy_timeout: float) -> SqliteLayout:
        """The layout object for what the file holds; a missing file is created in
        schema 17 (``create``) or refused. If another process creates the file between
        the look and the creation, look again."""
        name = repr(self)
        for _ in range(_OPEN_ATTEMPTS):
            found = find_layout(self.path)
            if found == "missing" and mode != "create":
                raise StoreNotFoundError(str(self.path), "no such file")
            try:
                if found == "dsh" or (found == "empty" and mode != "create"):
                    return DshLayout(
                        self.path,
                        mode=mode,
                        busy_timeout=busy_timeout,
                        name=name,
                        stats=self.stats,
                    )
                return HarnessLayout(
                    self.path,
                    mode=mode,
                    busy_timeout=busy_timeout,
                    name=name,
                    stats=self.stats,
                    create=_CREATE.get(found),
                )
            except (FileExistsError, _LayoutChanged):
                continue  # another process created the file or its tables: look again
        raise StoreError(f"{self}: the file kept changing while it was opened")

    def __repr__(self) -> str:
        return f"SqliteSessionStore({str(self.path)!r})"

    def lock_path_of(self, session_id: SessionId) -> Path:
        """The lock file a writer of the session holds (it exists only while held, or
        after a writer crashed)."""
        return self._layout.lock_path_of(session_id)

    # --- the backend primitives, done by the file's layout ----------------------------

    def _claim(self, session_id: SessionId, *, stored: bool) -> None:
        self._layout.claim(session_id, stored=stored)

    def _disclaim(self, session_id: SessionId) -> None:
        self._layout.disclaim(session_id)

    def _write_batch(self, batch: Batch) -> None:
        self._layout.write_batch(batch)

    def _delete_log(self, session_id: SessionId) -> None:
        self._layout.delete_log(session_id)

    def _read_log(self, session_id: SessionId) -> StoredLog:
        return self._layout.read_log(session_id)

    def _read_events(self, session_id: SessionId, from_seq: int) -> list[LogEvent]:
        return self._layout.read_events(session_id, from_seq)

    def _log_version(self, session_id: SessionId) -> Hashable | None:
        return self._layout.log_version(session_id)

    def _read_log_versions(
        self, session_ids: Sequence[SessionId]
    ) -> dict[SessionId, Hashable | None]:
        return self._layout.log_versions(session_ids)

    def _read_headers(self) -> list[SessionHeader]:
        return self._layout.read_headers()

    def _search(
        self, query: SearchQuery, session_id: SessionId | None, role: str | None, limit: int
    ) -> list[SearchHit]:
        found = self._layout.search(query, session_id=session_id, role=role, limit=limit)
        return self._scan(query, session_id, role, limit) if found is None else found

    def _reindex(self) -> int:
        return self._layout.reindex()

    def _put_blob(self, sha256: str, data: bytes) -> None:
        blobs = self._blobs(writing=True)
        assert blobs is not None  # writing opens or creates them
        blobs.put(sha256, data)

    def _get_blob(self, sha256: str) -> bytes | None:
        blobs = self._blobs(writing=False)
        return None if blobs is None else blobs.get(sha256)

    def _has_blob(self, sha256: str) -> bool:
        blobs = self._blobs(writing=False)
        return blobs is not None and blobs.has(sha256)

    def _blobs(self, *, writing: bool) -> SqliteBlobs | None:
        """Layout 1 keeps attachments in its own database; beside a schema-17 database
        (whose schema the harness checks table by table) they go to the companion file
        ``<database>.dsh-attachments``, created by the first save."""
        if self._attachments is None:
            layout = self._layout
            if isinstance(layout, DshLayout):
                self._attachments = SqliteBlobs(layout.connection, writable=not self.read_only)
            elif writing or companion_path(self.path).exists():
                self._attachments = SqliteBlobs.companion(
                    self.path, read_only=self.read_only, busy_timeout=self._busy_timeout
                )
        return self._attachments

    def _release(self) -> None:
        if self._attachments is not None and not isinstance(self._layout, DshLayout):
            self._attachments.close()
        self._layout.release()


__all__ = ["SqliteSessionStore"]
