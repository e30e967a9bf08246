"""The two table layouts a SQLite session database can hold, and how to tell them apart.

:class:`~dsh_session.stores.SqliteSessionStore` is the one SQLite store. The file it
opens holds one of two layouts, and a private :class:`SqliteLayout` object reads and
writes each:

- the TypeScript harness's **schema 17** (``PRAGMA user_version`` 17, ``application_id``
  ``0x44534850``; ``harness_sqlite.py``), which is also what a new file is created in,
  so that the harness can open every database dsh starts;
- dsh's own **layout 1** (``user_version`` 1, tables ``dsh_sessions`` and
  ``dsh_events``; ``sqlite.py``), which databases written by earlier dsh hold, and which
  keeps being read and appended to in its own form.

:func:`find_layout` decides between them from what is already on disk, creating
nothing: it reads the file's 100-byte header (where SQLite keeps both numbers) and,
when a write-ahead log beside it may hold a newer header or the header shows no layout
yet, asks SQLite through a read-only connection. A file without a single table (an
empty file, or one another process is creating this moment) counts as new.
docs/decisions/2026-12-04-one-store-class-per-backend.md says why one class with a
private object per layout rather than one public class each.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Literal

from dsh_session._harness_format import APPLICATION_ID, SCHEMA_VERSION
from dsh_session._header import SessionHeader, SessionId
from dsh_session._search import SearchHit, SearchQuery
from dsh_session.errors import NotARegularFileError, StoreError, StoreNotFoundError
from dsh_session.events import LogEvent
from dsh_session.stores._base import Batch
from dsh_session.stores._recovery import StoredLog
from dsh_session.stores._regular_file import open_regular

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first bytes of every SQLite database file."""

_HEADER_LENGTH = 100
"""Length of a SQLite file's header, which holds ``user_version`` (bytes 60-63) and
``application_id`` (bytes 68-71)."""

Found = Literal["missing", "empty", "harness", "dsh"]
"""What :func:`find_layout` found: no file yet; an empty file or a database without a
single table (new: ``mode="create"`` gives it schema 17, the other modes refuse it);
schema 17; or anything else, which layout 1's own checks accept or refuse (a database
of ``user_version`` 0 with other tables gets layout 1's tables beside them in
``mode="create"``, as before)."""


class _LayoutChanged(StoreError):
    """Another process gave the database a layout (or held it to do so) while this one
    was opening it; the store looks at the file again."""


def find_layout(path: Path) -> Found:
    """Which layout the file at ``path`` holds, read without creating or changing
    anything. Raises :class:`StoreNotFoundError` naming the path and what is there when
    it is neither: not a regular file, not a SQLite database, a harness database of
    another schema version, or ``user_version`` 17 without the harness's id."""
    try:
        with open_regular(path) as file:
            head = file.read(_HEADER_LENGTH)
    except FileNotFoundError:
        return "missing"
    except NotARegularFileError as error:
        raise StoreNotFoundError(str(path), str(error)) from None
    except OSError as error:
        raise StoreNotFoundError(str(path), f"cannot read it ({error.strerror})") from None
    if not head:
        return "empty"  # what SQLite reads as a database without tables
    if len(head) < _HEADER_LENGTH or not head.startswith(SQLITE_MAGIC):
        raise StoreNotFoundError(
            str(path), "not a database (the file does not start with SQLite's header)"
        )
    version = int.from_bytes(head[60:64], "big", signed=True)
    application = int.from_bytes(head[68:72], "big", signed=True)
    logged = Path(f"{path}-wal").exists()
    if logged or (version, application) == (0, 0):
        version, application, tables = _pragmas(path, logged=logged)
        if (version, application, tables) == (0, 0, 0):
            return "empty"
    if application == APPLICATION_ID and version == SCHEMA_VERSION:
        return "harness"
    if application == APPLICATION_ID:
        raise StoreNotFoundError(
            str(path),
            f"a database of the TypeScript harness in schema version {version}; "
            f"dsh reads and writes schema {SCHEMA_VERSION}",
        )
    if version == SCHEMA_VERSION:
        raise StoreNotFoundError(
            str(path),
            f"a SQLite database with user_version {SCHEMA_VERSION} but application id "
            f"{application:#x}, not the harness's {APPLICATION_ID:#x}",
        )
    return "dsh"


def _pragmas(path: Path, *, logged: bool) -> tuple[int, int, int]:
    """``user_version``, ``application_id`` and the number of schema objects, as SQLite
    sees them: through the write-ahead log when one is beside the file, else through
    an ``immutable`` connection, which creates no companion files."""
    uri = f"{path.absolute().as_uri()}?mode=ro" + ("" if logged else "&immutable=1")
    try:
        db = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as error:
        raise StoreNotFoundError(str(path), f"cannot open the database ({error})") from None
    try:
        version: int = db.execute("PRAGMA user_version").fetchone()[0]
        application: int = db.execute("PRAGMA application_id").fetchone()[0]
        objects: int = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as error:
        raise StoreNotFoundError(str(path), f"not a readable database ({error})") from None
    finally:
        db.close()
    return version, application, objects


class SqliteLayout(ABC):
    """One layout's reading and writing of a database file: the blocking primitives of
    :class:`~dsh_session.stores.SessionStore`, which the store forwards here. An
    implementation names itself by the store's ``repr`` in its messages and counts
    its commits in the store's ``stats``."""

    path: Path
    """The database file."""

    @abstractmethod
    def lock_path_of(self, session_id: SessionId) -> Path:
        """The lock file a writer of the session holds."""

    @abstractmethod
    def claim(self, session_id: SessionId, *, stored: bool) -> None:
        """Take the session for writing (``SessionStore._claim``)."""

    @abstractmethod
    def disclaim(self, session_id: SessionId) -> None:
        """Give the session up (``SessionStore._disclaim``)."""

    @abstractmethod
    def write_batch(self, batch: Batch) -> None:
        """Make a batch durable in one transaction (``SessionStore._write_batch``)."""

    @abstractmethod
    def delete_log(self, session_id: SessionId) -> None:
        """Remove a stored session in one transaction (``SessionStore._delete_log``)."""

    @abstractmethod
    def read_log(self, session_id: SessionId) -> StoredLog:
        """A stored log (``SessionStore._read_log``)."""

    def read_events(self, session_id: SessionId, from_seq: int) -> list[LogEvent]:
        """The stored events from ``from_seq`` on, for a follower."""
        return self.read_log(session_id).events[from_seq:]

    def log_version(self, session_id: SessionId) -> Hashable | None:
        """What changes with each write to the session (``SessionStore._log_version``);
        ``None`` when the layout keeps nothing cheaper to read than the events."""
        return None

    def log_versions(self, session_ids: Sequence[SessionId]) -> dict[SessionId, Hashable | None]:
        """:meth:`log_version` of several sessions, read together where the layout can."""
        return {session_id: self.log_version(session_id) for session_id in session_ids}

    @abstractmethod
    def read_headers(self) -> list[SessionHeader]:
        """Every stored session's header (``SessionStore._read_headers``)."""

    @abstractmethod
    def search(
        self, query: SearchQuery, *, session_id: str | None, role: str | None, limit: int
    ) -> list[SearchHit] | None:
        """Search through the layout's index (``SessionStore._search``); ``None`` when
        the index cannot answer for the logs (then the store scans them)."""

    @abstractmethod
    def reindex(self) -> int:
        """Rebuild the index from the logs (``SessionStore._reindex``)."""

    @abstractmethod
    def release(self) -> None:
        """Close the connection and let every session go (``SessionStore._release``)."""


__all__ = [
    "SQLITE_MAGIC",
    "Found",
    "SqliteLayout",
    "find_layout",
]
