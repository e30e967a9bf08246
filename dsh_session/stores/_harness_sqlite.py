"""The TypeScript harness's SQLite database (schema 17) behind :class:`SqliteSessionStore`.

The tables, row codec and checks are :mod:`dsh_session._harness_format.sqlite_db`; this
layout puts them behind the store (``_sqlite_layouts.py``), so listing, reading, loading
and appending work on a database the harness wrote, and the harness can resume what dsh
appended (packed rows within SQLite's bounds, zstd ``data`` BLOBs, varint seq lists).
It is also the layout of every new database the store creates (mode 0600).

Ownership: a writer holds ``<database>.<session-id>.lock`` from attach or load until
detach or close, as with dsh's own database. The harness's schema has no room for dsh's
writer-epoch table (it refuses any extra table), so fencing is by sequence instead:
each batch checks, inside its transaction, that the stored log ends where this store
left it, and refuses otherwise.

Modes as for every store: ``read`` creates nothing. While no write-ahead log exists the
file alone is the whole database, and each read then uses an ``immutable`` connection
that creates no ``-wal``/``-shm`` files; with a log present it reads through it.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sqlite3
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, Literal

from dsh_session._harness_format import (
    StoredSession,
    append_batch,
    check_schema,
    check_vocabulary,
    create_database,
    delete_session,
    migrate_legacy_events,
    read_headers,
    read_stored_session,
)
from dsh_session._harness_format.sqlite_db import initialize_database
from dsh_session._header import SessionHeader, SessionId
from dsh_session._parse import collector_paused, parse_events, parse_log
from dsh_session._search import SearchHit, SearchQuery
from dsh_session.errors import (
    HarnessCorruptError,
    SessionError,
    SessionNotFoundError,
    StoreError,
)
from dsh_session.events import LogEvent
from dsh_session.stores._base import Batch, StoreMode, StoreStats
from dsh_session.stores._codec import dump_event, dump_header
from dsh_session.stores._harness_jsonl import dsh_header
from dsh_session.stores._ownership import SessionLocks
from dsh_session.stores._recovery import StoredLog
from dsh_session.stores._search_fts5 import indexed_search
from dsh_session.stores._search_harness import attach_index, harness_index, stamp_of
from dsh_session.stores._sqlite_layouts import SqliteLayout, _LayoutChanged

logger = logging.getLogger(__name__)

_IDS_PER_QUERY = 500
"""Session ids per ``IN (...)`` list: well under SQLite's bound on a statement's
parameters (999 before 3.32)."""


class HarnessLayout(SqliteLayout):
    """Sessions in a schema-17 database of the TypeScript harness. With
    ``create="file"`` the file is created (mode 0600, its folder too); with
    ``create="tables"`` an existing file holding no table (an empty file) is made
    mode 0600 and given the schema. Either raises :class:`FileExistsError` if another
    process created the file or its tables first. Every mode then checks,
    through a read-only connection, that the file holds exactly schema 17 (else
    :class:`~dsh_session._harness_format.HarnessSchemaError`) before anything is created
    beside it."""

    def __init__(
        self,
        path: Path,
        *,
        mode: StoreMode,
        busy_timeout: float,
        name: str,
        stats: StoreStats,
        create: Literal["file", "tables"] | None = None,
    ) -> None:
        self.path = path
        self.read_only = mode == "read"
        self.stats = stats
        self._name = name
        self._busy_timeout = busy_timeout
        self._locks = SessionLocks(self.lock_path_of, name)
        self._db: sqlite3.Connection | None = None
        self._search = harness_index(self._events_of)
        if create is not None:
            self._create(create)
        self._check(self._reader())
        if not self.read_only:
            self._db = self._connect("rw")
            self._attach_index(self._db)

    def __repr__(self) -> str:
        return self._name

    def _create(self, what: Literal["file", "tables"]) -> None:
        try:
            if what == "file":
                self.path.parent.mkdir(parents=True, exist_ok=True)
                create_database(self.path).close()
            else:
                os.chmod(self.path, 0o600)
                initialize_database(self.path).close()
        except sqlite3.OperationalError as error:  # busy: another process is creating it
            raise _LayoutChanged(f"{self}: cannot create the schema yet: {error}") from error

    def lock_path_of(self, session_id: SessionId) -> Path:
        """The lock file a writer of the session holds."""
        return self.path.with_name(f"{self.path.name}.{session_id}.lock")

    # --- connections ------------------------------------------------------------------

    def _connect(self, uri_mode: str, *, immutable: bool = False) -> sqlite3.Connection:
        uri = f"{self.path.absolute().as_uri()}?mode={uri_mode}"
        if immutable:
            uri += "&immutable=1"
        try:
            db = sqlite3.connect(
                uri,
                uri=True,
                timeout=self._busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            if uri_mode == "rw":
                db.execute("PRAGMA foreign_keys = ON")
                db.execute("PRAGMA synchronous = FULL")
        except sqlite3.Error as error:
            raise StoreError(f"{self}: cannot open the database: {error}") from error
        return db

    def _reader(self) -> sqlite3.Connection:
        """The writer's connection, or (read-only store) a fresh one for this read."""
        if self._db is not None:
            return self._db
        return self._connect("ro", immutable=not Path(f"{self.path}-wal").exists())

    def _attach_index(self, db: sqlite3.Connection) -> bool:
        try:
            return attach_index(db, self._search, self.path, writable=not self.read_only)
        except sqlite3.Error as error:
            db.close()
            raise StoreError(f"{self}: cannot open its search index: {error}") from error

    def _check(self, db: sqlite3.Connection) -> None:
        try:
            check_schema(db, where=str(self.path))
        except BaseException:
            db.close()
            raise
        finally:
            if db is not self._db:
                db.close()

    # --- ownership --------------------------------------------------------------------

    def claim(self, session_id: SessionId, *, stored: bool) -> None:
        self._locks.acquire(session_id)

    def disclaim(self, session_id: SessionId) -> None:
        self._locks.release(session_id)

    # --- writing ----------------------------------------------------------------------

    def write_batch(self, batch: Batch) -> None:
        """One transaction; it refuses a batch that does not start where the stored log
        ends, which fences off a writer that appended behind this store's back."""
        assert self._db is not None, "a read-only store never writes"
        events = [json.loads(dump_event(event)) for event in batch.events]
        sid = batch.session_id

        def index(db: sqlite3.Connection) -> None:
            self._search.add(db, sid, batch.events, stamp_of(db, sid))

        if batch.header is None:
            append_batch(self._db, {"id": sid}, events, before_commit=index)
        else:
            header: dict[str, Any] = json.loads(dump_header(batch.header))
            header.setdefault("delegationDepth", 0)
            append_batch(self._db, header, events, create=True, before_commit=index)
        self.stats.fsyncs += 1

    def delete_log(self, session_id: SessionId) -> None:
        """The session's row and its event rows, in one transaction."""
        assert self._db is not None, "a read-only store never writes"
        forget = functools.partial(self._search.forget, session_id=session_id)
        if not delete_session(self._db, session_id, before_commit=forget):
            raise SessionNotFoundError(session_id, self._name)
        self.stats.fsyncs += 1

    # --- reading ----------------------------------------------------------------------

    def log_version(self, session_id: SessionId) -> Hashable | None:
        """The session row's incarnation and revision: every write, the harness's too,
        bumps the revision, and a session deleted and made again has a new incarnation."""
        return self.log_versions([session_id])[session_id]

    def log_versions(self, session_ids: Sequence[SessionId]) -> dict[SessionId, Hashable | None]:
        """:meth:`log_version` of several sessions through one connection (a read-only
        store opens one per read)."""
        versions: dict[SessionId, Hashable | None] = dict.fromkeys(session_ids)
        db = self._reader()
        try:
            for start in range(0, len(session_ids), _IDS_PER_QUERY):
                some = session_ids[start : start + _IDS_PER_QUERY]
                marks = ", ".join("?" * len(some))
                query = f"SELECT id, incarnation, revision FROM sessions WHERE id IN ({marks})"
                for session_id, incarnation, revision in db.execute(query, some):
                    versions[session_id] = (incarnation, revision)
        finally:
            if db is not self._db:
                db.close()
        return versions

    def read_log(self, session_id: SessionId) -> StoredLog:
        # Rows decode to a few acyclic dicts per event, all alive until validated: left
        # on, the collector would walk the growing heap again and again (a third of a
        # 100k-event read).
        with collector_paused():
            stored = self._read_stored(session_id)
            header = dsh_header(stored.header)
            events, session = parse_log(header, self._records_of(stored))
            return StoredLog(header, events, session=session)

    def _events_of(self, stored: StoredSession) -> list[LogEvent]:
        """A stored session's events as dsh reads them, refusing a torn one."""
        return parse_events(self._records_of(stored))

    def _records_of(self, stored: StoredSession) -> list[Any]:
        """A stored session's event records, migrated and checked, refusing a torn one."""
        session_id = stored.header["id"]
        if stored.torn_from is not None:
            raise HarnessCorruptError(
                f"{self}: the rows of session {session_id!r} from seq {stored.torn_from} "
                "do not continue its log; they are left as they are",
                seq=stored.torn_from,
            )
        events = migrate_legacy_events(stored.events, session_id)
        check_vocabulary(events, session_id)
        return events

    def _read_stored(self, session_id: SessionId) -> StoredSession:
        db = self._reader()
        try:
            db.execute("BEGIN")  # one snapshot for the header and the events
            try:
                stored = read_stored_session(db, session_id)
            finally:
                db.execute("COMMIT")
        finally:
            if db is not self._db:
                db.close()
        if stored is None:
            raise SessionNotFoundError(session_id, self._name)
        return stored

    def read_headers(self) -> list[SessionHeader]:
        db = self._reader()
        try:
            stored = read_headers(db)
        finally:
            if db is not self._db:
                db.close()
        headers = []
        for header in stored:
            try:
                headers.append(dsh_header(header))
            except SessionError as error:  # e.g. an id dsh cannot use as a file name
                logger.warning("%s: session %r not listed: %s", self, header.get("id"), error)
        return headers

    # --- search -----------------------------------------------------------------------

    def search(
        self, query: SearchQuery, *, session_id: str | None, role: str | None, limit: int
    ) -> list[SearchHit] | None:
        db = self._reader()
        try:
            if db is not self._db and not self._attach_index(db):
                return None
            return indexed_search(
                self._search,
                db,
                writable=db is self._db,
                where=self._name,
                query=query,
                session_id=session_id,
                role=role,
                limit=limit,
            )
        finally:
            if db is not self._db:
                db.close()

    def reindex(self) -> int:
        assert self._db is not None, "a read-only store never writes"
        return self._search.rebuild(self._db)

    def release(self) -> None:
        if self._db is not None:
            self._db.close()
        self._locks.release_all()


__all__ = [
    "HarnessLayout",
]
