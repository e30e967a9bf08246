"""dsh's own SQLite layout 1, which earlier dsh created: :class:`DshLayout` reads it and
appends to it in its own form for :class:`~dsh_session.SqliteSessionStore`, and
:func:`create_layout_one` makes a new one for tests and benchmarks.

Layout 1 (``PRAGMA user_version`` = 1): ``dsh_sessions(id, created_at, header)`` with the
header's wire JSON, and ``dsh_events(session_id, seq, event)`` with each event's wire
JSON, keyed by ``(session_id, seq)``. Other tables in the same file are left alone. It
claims a writer epoch in ``dsh_session_writers`` (created by the first claim), which
every batch re-checks inside its own transaction (``_writer_epochs.py``). A batch's
transaction writes the log alone; the search index catches up before each search
(``_search_layout_one.py``).
"""

from __future__ import annotations

import functools
import os
import sqlite3
from pathlib import Path

from dsh_session._harness_format import SCHEMA_VERSION as HARNESS_SCHEMA_VERSION
from dsh_session._header import SessionHeader, SessionId, parse_header
from dsh_session._mailbox._sqlite import create_mailbox_table
from dsh_session._parse import RawEvent, collector_paused, parse_events, parse_log
from dsh_session._search import SearchHit, SearchQuery
from dsh_session._session import Session
from dsh_session.errors import (
    NotARegularFileError,
    SessionCorruptError,
    SessionError,
    SessionNotFoundError,
    StoreError,
    StoreNotFoundError,
)
from dsh_session.events import LogEvent
from dsh_session.stores._base import Batch, StoreMode, StoreStats
from dsh_session.stores._codec import (
    dump_event,
    dump_header,
    events_in_seq_order,
    listed_headers,
)
from dsh_session.stores._ownership import SessionLocks, this_writer
from dsh_session.stores._recovery import StoredLog
from dsh_session.stores._regular_file import open_regular
from dsh_session.stores._search_fts5 import indexed_search
from dsh_session.stores._search_layout_one import create_index, layout_one_index
from dsh_session.stores._sqlite_layouts import (
    SQLITE_MAGIC,
    SqliteLayout,
    _LayoutChanged,
)
from dsh_session.stores._writer_epochs import WriterEpochs

_EPOCHS = WriterEpochs("?")

_INSERT = "INSERT INTO dsh_events (session_id, seq, event) VALUES (?, ?, ?)"
_INSERT_FENCED = (
    "INSERT INTO dsh_events (session_id, seq, event) SELECT ?1, ?2, ?3 WHERE EXISTS "
    "(SELECT 1 FROM dsh_session_writers WHERE session_id = ?1 AND epoch = ?4)"
)
"""The first row of a batch, inserted only while the writer still holds its epoch."""

LAYOUT_VERSION = 1
"""Version of the table layout, kept in ``PRAGMA user_version``."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS dsh_sessions (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    header TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS dsh_events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""


_URI_MODES: dict[StoreMode, str] = {"create": "rwc", "open": "rw", "read": "ro"}


def create_layout_one(path: str | os.PathLike[str]) -> Path:
    """Create an empty database of dsh's layout 1 at ``path`` (which must not exist;
    its folder is created) and return its path: exactly what ``SqliteSessionStore(path)``
    created before new files took the harness's schema. Not exported: for tests and
    benchmarks of the files earlier dsh wrote."""
    file = Path(path)
    if file.exists():
        raise FileExistsError(f"{file} exists; layout 1 is created only as a new file")
    layout = DshLayout(
        file, mode="create", busy_timeout=5.0, name=f"layout-1 {file}", stats=StoreStats()
    )
    layout.release()
    return file


class DshLayout(SqliteLayout):
    """dsh's own layout 1. ``mode="create"`` creates the file when missing (only
    :func:`create_layout_one` asks for that: the store creates new files in schema 17)
    and the tables when the database has none; ``"open"`` and ``"read"`` require a dsh
    database (else :class:`StoreNotFoundError`, the file untouched)."""

    def __init__(
        self, path: Path, *, mode: StoreMode, busy_timeout: float, name: str, stats: StoreStats
    ) -> None:
        self.path = path
        self.read_only = mode == "read"
        self.stats = stats
        self._name = name
        creating = mode == "create"
        if creating:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        else:
            _require_sqlite_file(self.path)
        if self.path.exists():
            self._peek_layout(creating=creating)
        self._locks = SessionLocks(self.lock_path_of, name)
        self._epochs: dict[SessionId, int] = {}
        self._search = layout_one_index()
        """The writer epoch this store claimed, per session it owns and has written."""
        uri = f"{self.path.absolute().as_uri()}?mode={_URI_MODES[mode]}"
        try:
            self._db = sqlite3.connect(
                uri, uri=True, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise StoreError(f"{self}: cannot open the database: {error}") from error
        try:
            self._require_layout(self._db, creating=creating)
            if not self.read_only:
                self._prepare()
        except sqlite3.Error as error:
            self._db.close()
            raise StoreError(f"{self}: cannot prepare the database: {error}") from error
        except BaseException:
            self._db.close()
            raise

    def __repr__(self) -> str:
        return self._name

    @property
    def connection(self) -> sqlite3.Connection:
        """The database connection (autocommit), for tables kept beside the logs."""
        return self._db

    def _peek_layout(self, *, creating: bool) -> None:
        """Check the layout before a normal connection could add companion files: when
        no write-ahead log exists, the file alone is the whole database, and an
        ``immutable`` connection reads it without creating ``-wal``/``-shm`` files (so
        someone else's WAL-mode database is refused with nothing created). With a log
        present, the check waits for the real connection, which sees the log."""
        if Path(f"{self.path}-wal").exists():
            return
        try:
            peek = sqlite3.connect(f"{self.path.absolute().as_uri()}?mode=ro&immutable=1", uri=True)
        except sqlite3.Error as error:
            raise StoreError(f"{self}: cannot open the database: {error}") from error
        try:
            self._require_layout(peek, creating=creating)
        finally:
            peek.close()

    def _require_layout(self, db: sqlite3.Connection, *, creating: bool) -> None:
        """Refuse, by reading only, a database that does not hold dsh's tables (when
        ``creating``, a database with no layout yet is accepted: the tables are added)."""
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = {
                name
                for (name,) in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name IN ('dsh_sessions', 'dsh_events')"
                )
            }
        except sqlite3.DatabaseError as error:
            raise StoreNotFoundError(str(self.path), f"not a readable database ({error})") from None
        if version == HARNESS_SCHEMA_VERSION:  # created by another process meanwhile
            raise _LayoutChanged(f"{self}: the database was given schema 17 meanwhile")
        if creating and version == 0:
            return
        if version < 1 or tables != {"dsh_sessions", "dsh_events"}:
            raise StoreNotFoundError(
                str(self.path),
                f"a SQLite database with user_version {version} without dsh's tables "
                "(neither dsh's layout 1 nor the harness's schema 17; not a dsh store)",
            )
        if version > LAYOUT_VERSION:
            raise StoreError(
                f"{self}: table layout version {version} was written by a newer dsh; upgrade"
            )

    def _prepare(self) -> None:
        db = self._db
        if db.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
            raise StoreError(f"{self}: the database cannot use write-ahead logging")
        db.execute("PRAGMA synchronous=FULL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > LAYOUT_VERSION:
            raise StoreError(
                f"{self}: table layout version {version} was written by a newer dsh; upgrade"
            )
        if version < LAYOUT_VERSION:
            self._create_tables(db)
        create_mailbox_table(db)  # the delivery mailbox (dsh_session/_mailbox/_sqlite.py)
        create_index(self._search, db)

    def _create_tables(self, db: sqlite3.Connection) -> None:
        """Add layout 1's tables in one transaction, unless, once it holds the write
        lock, the database turns out to have been given a layout meanwhile (another
        process creating the file in schema 17): then :class:`_LayoutChanged`."""
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] != 0:
                raise _LayoutChanged(f"{self}: another process gave the database a layout")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def lock_path_of(self, session_id: SessionId) -> Path:
        """The lock file a writer of the session holds."""
        return self.path.with_name(f"{self.path.name}.{session_id}.lock")

    # --- ownership --------------------------------------------------------------------

    def claim(self, session_id: SessionId, *, stored: bool) -> None:
        """Lock the session; for a load, also claim its epoch now (fencing any older
        writer before the log is read). A new session claims its epoch in the
        transaction that creates it."""
        self._locks.acquire(session_id)
        if not stored:
            return
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                exists = db.execute(
                    "SELECT 1 FROM dsh_sessions WHERE id = ?", (session_id,)
                ).fetchone()
                if exists is None:
                    raise SessionNotFoundError(session_id, self._name)
                epoch = _EPOCHS.claim(db.cursor(), session_id, this_writer())
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.Error as error:
            raise StoreError(f"{self}: cannot claim session {session_id!r}: {error}") from error
        self.stats.fsyncs += 1
        self._epochs[session_id] = epoch

    def disclaim(self, session_id: SessionId) -> None:
        self._epochs.pop(session_id, None)
        self._locks.release(session_id)

    # --- writing ----------------------------------------------------------------------

    def write_batch(self, batch: Batch) -> None:
        """Write the batch in one transaction that first checks (or, creating the
        session, claims) this store's writer epoch. The search index is not written
        here: the next search catches it up (``_search_layout_one.py``)."""
        sid = batch.session_id
        rows = [(sid, event.seq, dump_event(event).decode()) for event in batch.events]
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            if batch.header is not None:
                self._insert_header(batch.header)
                epoch = _EPOCHS.claim(db.cursor(), sid, this_writer())
                db.executemany(_INSERT, rows)
            else:
                epoch = self._epochs[sid]
                self._insert_fenced(sid, rows, epoch)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        self.stats.fsyncs += 1
        self._epochs[sid] = epoch

    def _insert_fenced(
        self, sid: SessionId, rows: list[tuple[SessionId, int, str]], epoch: int
    ) -> None:
        """Insert the rows of a session this store owns at ``epoch``, the epoch check
        riding on the first insert, which adds its row only while the session still
        holds ``epoch``: the batch runs a plain insert's statements, where a separate
        check was one more (bench/README.md counts them). The transaction
        holds the write lock from ``BEGIN IMMEDIATE``, so the epoch cannot move between
        that row and the rest. A fenced writer's first insert adds nothing, and
        :class:`SessionConflictError` names the new holder before any other row is
        tried."""
        db = self._db
        if not rows:  # nothing to carry the check: it runs alone
            _EPOCHS.check(db.cursor(), sid, epoch, self._name)
            return
        if db.execute(_INSERT_FENCED, (*rows[0], epoch)).rowcount != 1:
            raise _EPOCHS.conflict(db.cursor(), sid, epoch, self._name)
        db.executemany(_INSERT, rows[1:])

    def _insert_header(self, header: SessionHeader) -> None:
        try:
            self._db.execute(
                "INSERT INTO dsh_sessions (id, created_at, header) VALUES (?, ?, ?)",
                (header.id, header.created_at, dump_header(header)),
            )
        except sqlite3.IntegrityError:
            raise StoreError(
                f"session {header.id!r} already exists in {self}; load it instead of "
                "attaching a new session with the same id"
            ) from None

    def delete_log(self, session_id: SessionId) -> None:
        """One transaction removes the header, the events and the writer epoch."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            deleted = db.execute("DELETE FROM dsh_sessions WHERE id = ?", (session_id,))
            if deleted.rowcount == 0:
                raise SessionNotFoundError(session_id, self._name)
            db.execute("DELETE FROM dsh_events WHERE session_id = ?", (session_id,))
            _EPOCHS.forget(db.cursor(), session_id)
            self._search.forget(db, session_id)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        self.stats.fsyncs += 1

    # --- reading ----------------------------------------------------------------------

    def read_log(self, session_id: SessionId) -> StoredLog:
        db = self._db
        # The rows stream from the cursor into the validator inside one read snapshot,
        # each freed once its event is built (the floor of a load reads them so too).
        with collector_paused():
            db.execute("BEGIN")  # one snapshot for the header and the events
            try:
                found = db.execute(
                    "SELECT header FROM dsh_sessions WHERE id = ?", (session_id,)
                ).fetchone()
                if found is None:
                    raise SessionNotFoundError(session_id, self._name)
                header = parse_header(found[0])
                if header.id != session_id:
                    raise SessionCorruptError(
                        f"{self}: the row of session {session_id!r} holds a header naming "
                        f"session {header.id!r}",
                        field="id",
                    )
                events, session = self._parse_rows(header)
            finally:
                db.execute("COMMIT")
        return StoredLog(header, events, session=session)

    def _parse_rows(self, header: SessionHeader) -> tuple[list[LogEvent], Session | None]:
        """``parse_log`` over the session's rows as the cursor yields them. A gap in the
        seqs is reported before any damaged row, wherever each is, as when every seq
        was checked before the first row was validated."""
        sid, where = header.id, str(self)
        query = "SELECT seq, event FROM dsh_events WHERE session_id = ? ORDER BY seq"
        rows = self._db.execute(query, (sid,))
        try:
            return parse_log(
                header,
                events_in_seq_order(rows, 0, sid, where),
                row_at=functools.partial(self._event_at, sid),
            )
        except SessionError:
            for _ in events_in_seq_order(self._db.execute(query, (sid,)), 0, sid, where):
                pass  # raises at the first gap
            raise
        finally:
            rows.close()

    def _event_at(self, session_id: SessionId, seq: int) -> RawEvent:
        found = self._db.execute(
            "SELECT event FROM dsh_events WHERE session_id = ? AND seq = ?", (session_id, seq)
        ).fetchone()
        event: RawEvent = found[0]
        return event

    def read_events(self, session_id: SessionId, from_seq: int) -> list[LogEvent]:
        """The stored events from ``from_seq`` on (what a follower polls for)."""
        if (
            self._db.execute("SELECT 1 FROM dsh_sessions WHERE id = ?", (session_id,)).fetchone()
            is None
        ):
            raise SessionNotFoundError(session_id, self._name)
        rows = self._db.execute(
            "SELECT event FROM dsh_events WHERE session_id = ? AND seq >= ? ORDER BY seq",
            (session_id, from_seq),
        ).fetchall()
        return parse_events([event for (event,) in rows])

    def read_headers(self) -> list[SessionHeader]:
        return listed_headers(self._name, self._db.execute("SELECT id, header FROM dsh_sessions"))

    def search(
        self, query: SearchQuery, *, session_id: str | None, role: str | None, limit: int
    ) -> list[SearchHit] | None:
        return indexed_search(
            self._search,
            self._db,
            writable=not self.read_only,
            where=self._name,
            query=query,
            session_id=session_id,
            role=role,
            limit=limit,
        )

    def reindex(self) -> int:
        return self._search.rebuild(self._db)

    def release(self) -> None:
        self._db.close()
        self._epochs.clear()
        self._locks.release_all()


def _require_sqlite_file(path: Path) -> None:
    """Refuse, without creating or opening it through SQLite, a path that is not an
    existing regular file starting with SQLite's magic bytes."""
    try:
        with open_regular(path) as file:
            start = file.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        raise StoreNotFoundError(str(path), "no such file") from None
    except NotARegularFileError as error:
        raise StoreNotFoundError(str(path), str(error)) from None
    except OSError as error:
        raise StoreNotFoundError(str(path), f"cannot read it ({error.strerror})") from None
    if start != SQLITE_MAGIC:
        raise StoreNotFoundError(str(path), "not a SQLite database")


__all__ = [
    "LAYOUT_VERSION",
    "DshLayout",
    "create_layout_one",
]
