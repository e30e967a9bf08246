"""PostgreSQL store: many writer processes on many machines, one writer per session.

Each store object has one *writer connection* (autocommit) that holds its ownership
token (``fencing.py``) and makes every claim and flush, and a psycopg connection pool
for reads and releases, so an inspecting ``read``, ``list_sessions`` or a ``detach``
never queues behind a write. A flush is one fenced statement (``fencing.py``);
the base runs the blocking calls one at a time per store on a worker thread, because
a network round trip must not stall the event loop. After each flush commits,
the store's notifier sends a ``NOTIFY`` on a connection of its own, without waiting
for its answer (``notify.py``), which ``follow`` listens for (``follow.py``).

Tables live in the connection's schema (the first one on ``search_path``); a DSN's
``options=-csearch_path=...`` keeps several stores apart in one database.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from dsh_session._header import SessionHeader, SessionId, parse_header, validate_session_id
from dsh_session._parse import collector_paused, parse_events, parse_log
from dsh_session._search import SearchHit, SearchQuery
from dsh_session.errors import SessionCorruptError, SessionNotFoundError, StoreError
from dsh_session.events import LogEvent
from dsh_session.stores._base import Batch, SessionStore, StoreMode
from dsh_session.stores._codec import dump_event, listed_headers
from dsh_session.stores._follow import check_from_seq
from dsh_session.stores._ownership import this_writer
from dsh_session.stores._recovery import StoredLog
from dsh_session.stores.postgres import _attachments as attachments
from dsh_session.stores.postgres import _fencing as fencing
from dsh_session.stores.postgres import _schema as schema
from dsh_session.stores.postgres import _search as search_index
from dsh_session.stores.postgres._fencing import Connection, Fence
from dsh_session.stores.postgres._follow import Listener, listen_events
from dsh_session.stores.postgres._notify import Notifier
from dsh_session.stores.postgres._reads import events_between, read_events_from

logger = logging.getLogger(__name__)


class PostgresSessionStore(SessionStore):
    """Sessions in a PostgreSQL database, named by a libpq DSN or URL.

    ``mode="create"`` (the default) creates or migrates dsh's tables; ``"open"``
    requires them (else :class:`StoreNotFoundError`); ``"read"`` requires them and
    opens read-only transactions, so the server refuses every write. ``pool_size`` is
    the most connections the read pool opens. ``notify=False`` leaves out the
    ``NOTIFY`` sent after each flush (on a connection of its own, never waited for):
    followers then see new events only at their ``poll_interval``.
    """

    def __init__(
        self, dsn: str, *, mode: StoreMode = "create", pool_size: int = 4, notify: bool = True
    ) -> None:
        super().__init__(inline_batch_limit=-1)  # every call on a worker thread
        self.dsn = dsn
        """The DSN given (printed without its password)."""
        self.read_only = mode == "read"
        self._name = f"PostgresSessionStore({_without_password(dsn)!r})"
        self._notifier = (
            Notifier(dsn, fencing.CHANNEL, self._name) if notify and not self.read_only else None
        )
        """Wakes followers after each flush (``notify.py``)."""
        self._fences: dict[SessionId, Fence] = {}
        """What this store last saw of each session it owns."""
        self._owner = this_writer()
        self._listeners: dict[asyncio.AbstractEventLoop, Listener] = {}
        """The LISTEN connection of this store's followers, per event loop."""
        try:
            self._writer = self._connect()
        except psycopg.Error as error:
            raise StoreError(f"{self}: cannot connect: {error}") from error
        try:
            schema.prepare(self._writer, mode, repr(self))
            if not self.read_only:
                search_index.create_tables(self._writer)
                attachments.create_table(self._writer)
            self._token = 0 if self.read_only else fencing.take_token(self._writer)
            self._pool: ConnectionPool[Connection] = ConnectionPool(
                dsn,
                min_size=0,
                max_size=pool_size,
                kwargs=self._connect_kwargs(),
                open=True,
                name="dsh",
            )
        except psycopg.Error as error:
            self._writer.close()
            raise StoreError(f"{self}: cannot prepare the database: {error}") from error
        except BaseException:
            self._writer.close()
            raise

    def __repr__(self) -> str:
        return self._name

    def _connect_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"autocommit": True}
        if self.read_only:  # appended to the DSN's own options, if any
            options = psycopg.conninfo.conninfo_to_dict(self.dsn).get("options") or ""
            kwargs["options"] = f"{options} -c default_transaction_read_only=on".strip()
        return kwargs

    def _connect(self) -> Connection:
        return psycopg.connect(self.dsn, **self._connect_kwargs())

    def _writer_connection(self) -> Connection:
        """The writer connection, opened again (holding the same token) if it broke:
        whoever claimed a session meanwhile has fenced this store off it anyway."""
        if self._writer.closed or self._writer.broken:
            self._writer.close()
            self._writer = self._connect()
            fencing.retake_token(self._writer, self._token)
        return self._writer

    # --- ownership --------------------------------------------------------------------

    def _claim(self, session_id: SessionId, *, stored: bool) -> None:
        """Claim a stored session for a load; a new session is claimed by the
        statement that creates it (its first flush)."""
        if stored:
            self._claim_stored(session_id, take_over=False)

    def _take_over(self, session_id: SessionId) -> None:
        self._claim_stored(session_id, take_over=True)

    def _claim_stored(self, session_id: SessionId, *, take_over: bool) -> None:
        try:
            self._fences[session_id] = fencing.claim(
                self._writer_connection(),
                session_id,
                token=self._token,
                owner=self._owner,
                take_over=take_over,
                where=repr(self),
            )
        except psycopg.Error as error:
            raise StoreError(f"{self}: cannot claim session {session_id!r}: {error}") from error
        self.stats.fsyncs += 1

    def _disclaim(self, session_id: SessionId) -> None:
        if self._fences.pop(session_id, None) is None or self._closed:
            return
        try:
            with self._pool.connection() as connection:
                fencing.release(connection, self._token, [session_id])
        except psycopg.Error as error:  # the next claimant finds the token's lock free
            logger.warning("%s: could not release session %r: %s", self, session_id, error)

    def _delete_log(self, session_id: SessionId) -> None:
        """Claim the session like a load (refused while a live store owns it, which
        also fences any stale writer), then remove it in one transaction."""
        self._claim_stored(session_id, take_over=False)
        try:
            fencing.delete(
                self._writer_connection(), session_id, self._token, repr(self), search_index.FORGET
            )
        except psycopg.Error as error:
            raise StoreError(f"{self}: cannot delete session {session_id!r}: {error}") from error
        self.stats.fsyncs += 1

    # --- writing ----------------------------------------------------------------------

    def _write_batch(self, batch: Batch) -> None:
        """One statement: create the session with its first events, or append after
        the fence check, with the search index's rows (``fencing.py``)."""
        sid = batch.session_id
        rows = [(event.seq, dump_event(event).decode()) for event in batch.events]
        connection = self._writer_connection()
        head = (0 if batch.header is not None else self._fences[sid].head) + len(rows)
        index = search_index.index_rows(sid, batch.events, head)
        if batch.header is not None:
            fence = fencing.create(
                connection,
                batch.header,
                rows,
                token=self._token,
                owner=self._owner,
                where=repr(self),
                also=index,
            )
        else:
            fence = fencing.append(
                connection,
                sid,
                self._fences[sid],
                rows,
                where=repr(self),
                also=index,
            )
        self.stats.fsyncs += 1
        self._fences[sid] = fence
        if self._notifier is not None:
            self._notifier.announce(sid, fence.head)

    # --- reading ----------------------------------------------------------------------

    def _put_blob(self, sha256: str, data: bytes) -> None:
        attachments.put(self._pool, sha256, data)

    def _get_blob(self, sha256: str) -> bytes | None:
        return attachments.get(self._pool, sha256)

    def _read_log(self, session_id: SessionId) -> StoredLog:
        # The rows are acyclic and all alive until validated: the collector is paused
        # for them as parse_log pauses it for the events.
        with collector_paused(), self._pool.connection() as connection:
            found = connection.execute(
                "SELECT header, head FROM dsh_sessions WHERE id = %s", (session_id,)
            ).fetchone()
            if found is None:
                raise SessionNotFoundError(session_id, repr(self))
            stored, head = found
            texts = events_between(connection, session_id, 0, int(head), repr(self))
        header = parse_header(stored)
        if header.id != session_id:
            raise SessionCorruptError(
                f"{self}: the row of session {session_id!r} holds a header naming "
                f"session {header.id!r}",
                field="id",
            )
        events, session = parse_log(header, texts)
        return StoredLog(header, events, session=session)

    def _read_events(self, session_id: SessionId, from_seq: int) -> list[LogEvent]:
        with self._pool.connection() as connection:
            return read_events_from(connection, session_id, from_seq, repr(self))

    def _read_headers(self) -> list[SessionHeader]:
        with self._pool.connection() as connection:
            rows = connection.execute("SELECT id, header FROM dsh_sessions").fetchall()
        return listed_headers(repr(self), rows)

    def _search(
        self, query: SearchQuery, session_id: SessionId | None, role: str | None, limit: int
    ) -> list[SearchHit]:
        with self._pool.connection() as connection:
            usable = search_index.has_tables(connection)
            if usable and not self.read_only:
                search_index.reconcile(connection, self._events_for_index)
            elif usable:
                usable = not search_index.is_stale(connection)
            if usable:
                return search_index.search(connection, query, session_id, role, limit, repr(self))
        return self._scan(query, session_id, role, limit)

    def _reindex(self) -> int:
        with self._pool.connection() as connection:
            search_index.reconcile(connection, self._events_for_index, everything=True)
            found = connection.execute("SELECT count(*) FROM dsh_search_docs").fetchone()
        return int(found[0]) if found else 0

    def _events_for_index(
        self, connection: Connection, session_id: SessionId, head: int
    ) -> list[LogEvent]:
        return parse_events(events_between(connection, session_id, 0, head, repr(self)))

    def follow(
        self, session_id: str, *, from_seq: int = 0, poll_interval: float = 1.0
    ) -> AsyncGenerator[LogEvent, None]:
        """The session's durable events from ``from_seq`` on, in order, as any process
        commits them, woken by the ``NOTIFY`` of each flush (``poll_interval`` is only
        the fallback should a notification be missed). Runs until the caller stops
        iterating or the store is closed."""
        check_from_seq(from_seq)
        return listen_events(self, validate_session_id(session_id), from_seq, poll_interval)

    # --- lifetime ---------------------------------------------------------------------

    def _end_followers(self) -> None:
        super()._end_followers()
        listener = self._listeners.get(asyncio.get_running_loop())
        if listener is not None:
            listener.wake_all()

    def _release(self) -> None:
        try:
            if self._fences and not self._writer.closed:
                fencing.release(self._writer, self._token, list(self._fences))
        except psycopg.Error as error:  # the token's lock ends with the connection below
            logger.warning("%s: could not release its sessions: %s", self, error)
        finally:
            self._fences.clear()
            self._writer.close()
            self._pool.close()
            if self._notifier is not None:
                self._notifier.close()


def _without_password(dsn: str) -> str:
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.Error:
        return "<unparsable dsn>"
    info.pop("password", None)
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items() if v is not None})


__all__ = [
    "PostgresSessionStore",
]
