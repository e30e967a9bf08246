"""The write-behind store: what every backend shares.

Append is synchronous and in memory; a store remembers, per attached session, how many
of its events are durable, and ``flush`` writes the rest as one batch. That count is
the whole queue: a failed write leaves it where it was, so the batch stays queued ahead
of newer events and the next flush retries it together with them; nothing is dropped
and nothing is written twice.

Backends implement four blocking primitives (write a batch, read a log, list headers,
close). The base runs them one at a time per store, inline on the event loop for
small batches and on a worker thread for large ones: handing a write to a thread costs
more than the write itself when the batch is small (see
docs/decisions/2026-12-02-session-store-writes.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Callable, Hashable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Self, TypeVar

from dsh_llm._attachment_ref import AttachmentRef
from dsh_session._header import SessionHeader, SessionId, validate_session_id
from dsh_session._search import SearchHit, SearchQuery, parse_query
from dsh_session._search.scan import scan_logs
from dsh_session._session import Session
from dsh_session.errors import (
    AmbiguousSessionIdError,
    SessionConflictError,
    SessionError,
    SessionNotFoundError,
    StoreError,
)
from dsh_session.events import LogEvent
from dsh_session.stores._attachments import (
    AttachmentLimits,
    checked_ref,
    read_checked,
    require_stored,
    verify_stored,
)
from dsh_session.stores._follow import check_from_seq, poll_events
from dsh_session.stores._idle_followers import IdleFollowers
from dsh_session.stores._recovery import LoadReport, StoredLog, TornTail, restore_session

logger = logging.getLogger(__name__)

T = TypeVar("T")

INLINE_BATCH_LIMIT = 128
"""Batches of at most this many events are written on the event loop's thread."""

StoreMode = Literal["create", "open", "read"]
"""How a store opens its location: ``create`` makes the folder, file or tables when
missing (what an agent writing sessions wants); ``open`` requires an existing store
of this backend and may write to it; ``read`` requires an existing store, opens it
read-only and refuses every write (what inspection wants: it changes nothing)."""


@dataclass
class StoreStats:
    """Counters of a store's persistence work, for benchmarks and diagnostics."""

    flushes: int = 0
    """``flush`` calls, including those that found nothing to write."""
    batches_written: int = 0
    """Batches made durable (one SQLite transaction or one JSONL append each)."""
    events_written: int = 0
    """Events made durable."""
    fsyncs: int = 0
    """Durability barriers: ``fsync`` calls (JSONL) or committed transactions, each of
    which syncs the write-ahead log under ``synchronous=FULL`` (SQLite)."""
    failed_writes: int = 0
    """Batch writes that raised; their events stayed queued."""
    threaded_writes: int = 0
    """Batches handed to a worker thread because they were larger than the inline limit."""


@dataclass(frozen=True)
class Batch:
    """Events of one session to make durable in one write."""

    session_id: SessionId
    header: SessionHeader | None
    """The header, when this batch also creates the session in the store."""
    events: Sequence[LogEvent]
    """Contiguous events, starting at the first one not yet durable."""


@dataclass(eq=False)
class _Tracked:
    """An attached session and how much of it is durable."""

    session: Session
    durable: int
    """``session.events[:durable]`` are durable."""
    stored: bool
    """The header is durable (the session exists in the store)."""
    report: LoadReport | None = None


class SessionStore(ABC):
    """Persistence for sessions: attach, flush at checkpoints, load, list, close.

    A store serves one event loop at a time. Use it as an async context manager, or
    call :meth:`close`, so that pending events are flushed and files are released.
    """

    _blocking_io = True
    """Whether the backend's primitives block on I/O (if not, they always run inline)."""

    read_only = False
    """Whether the store was opened with ``mode="read"``: then attach and load refuse."""

    def __init__(self, *, inline_batch_limit: int = INLINE_BATCH_LIMIT) -> None:
        self.stats = StoreStats()
        """Counters of the work done so far."""
        self._inline_batch_limit = inline_batch_limit
        self._tracked: dict[SessionId, _Tracked] = {}
        self._loading: set[SessionId] = set()
        self._io_lock = asyncio.Lock()
        self._closed = False
        self._idle_followers = IdleFollowers(self._log_versions)
        """The followers waiting for more, woken by this object's flushes and by one
        shared look per poll interval at their logs' versions."""
        self.attachment_limits = AttachmentLimits()
        """What :meth:`save_attachment` accepts; assign new limits to change them."""
        self._stored_blobs: set[str] = set()
        """Digests of attachments known durable here (saved or checked by this object)."""

    # --- backend primitives (blocking; called one at a time) --------------------------

    @abstractmethod
    def _write_batch(self, batch: Batch) -> None:
        """Make ``batch`` durable, all or nothing as far as a later load can tell."""

    @abstractmethod
    def _read_log(self, session_id: SessionId) -> StoredLog:
        """Read a stored log; raise :class:`SessionNotFoundError` when there is none."""

    @abstractmethod
    def _read_headers(self) -> list[SessionHeader]:
        """The headers of every stored session."""

    @abstractmethod
    def _release(self) -> None:
        """Release files and connections, and the ownership of every session."""

    def _put_blob(self, sha256: str, data: bytes) -> None:
        """Make an attachment's bytes durable under their hex SHA-256 (once)."""
        raise StoreError(f"{self} cannot store attachments")

    def _get_blob(self, sha256: str) -> bytes | None:
        """An attachment's stored bytes, or ``None`` when there are none."""
        return None

    def _has_blob(self, sha256: str) -> bool:
        """Whether an attachment's bytes are stored (a backend may answer cheaper)."""
        return self._get_blob(sha256) is not None

    def _forget(self, session_id: SessionId) -> None:  # noqa: B027 - optional hook
        """Drop backend bookkeeping about a session that is no longer attached."""

    def _claim(self, session_id: SessionId, *, stored: bool) -> None:  # noqa: B027
        """Take exclusive ownership of a session for writing, or raise
        :class:`SessionConflictError` naming who holds it. ``stored`` is true for a
        load (called under the I/O lock, before the log is read) and false for an
        attach (called inline: it must not use state a running write uses)."""

    def _take_over(self, session_id: SessionId) -> None:
        """Claim a stored session for :meth:`load` even from a live writer, fencing it.
        Only a backend whose ownership lives in the database can take a session from a
        live process; the embedded stores' OS locks cannot be broken, so for them a
        take-over is a plain claim (it succeeds once the owner is gone)."""
        self._claim(session_id, stored=True)

    def _read_events(self, session_id: SessionId, from_seq: int) -> list[LogEvent]:
        """The stored events from ``from_seq`` on, for :meth:`follow`; a backend that can
        read a range without the whole log overrides this."""
        return self._read_log(session_id).events[from_seq:]

    def _log_version(self, session_id: SessionId) -> Hashable | None:
        """A token that changes whenever the session's stored log does, cheaper to read
        than its events, so an idle follower does not read the log at each poll;
        ``None`` where the backend has none (its follower reads each time)."""
        return None

    def _read_log_versions(
        self, session_ids: Sequence[SessionId]
    ) -> dict[SessionId, Hashable | None]:
        """:meth:`_log_version` of several sessions; a backend that can read them
        together overrides this."""
        return {session_id: self._log_version(session_id) for session_id in session_ids}

    async def _log_versions(
        self, session_ids: Sequence[SessionId]
    ) -> dict[SessionId, Hashable | None]:
        """The versions of several sessions' logs in one backend call: what the idle
        followers' shared look reads."""
        return await self._call(
            lambda: self._reading("log versions", self._read_log_versions, session_ids),
            batch_size=len(session_ids),
        )

    def _search(
        self, query: SearchQuery, session_id: SessionId | None, role: str | None, limit: int
    ) -> list[SearchHit]:
        """Search the stored logs; a backend with an index overrides this scan."""
        return self._scan(query, session_id, role, limit)

    def _scan(
        self, query: SearchQuery, session_id: SessionId | None, role: str | None, limit: int
    ) -> list[SearchHit]:
        ids = [session_id] if session_id else [h.id for h in self._read_headers()]
        logs = ((sid, self._read_log(sid).events) for sid in ids)
        return scan_logs(logs, query, role=role, limit=limit)

    def _reindex(self) -> int:
        """Rebuild the search index from the logs; the number of messages indexed. A
        backend without an index has nothing to rebuild."""
        return 0

    def _disclaim(self, session_id: SessionId) -> None:  # noqa: B027 - optional hook
        """Give ownership of a session up (nothing happens if it is not held)."""

    def _set_aside_torn_tail(self, session_id: SessionId, stored: StoredLog) -> TornTail:
        """Durably keep the torn tail's bytes somewhere a person finds them, before load
        shortens the log; return the tail with where they went, or raise
        :class:`StoreError` (then the log is left as it is). Only a backend whose reads
        can find a torn tail (JSONL) overrides this."""
        raise NotImplementedError(f"{self} found a torn tail but cannot keep its bytes")

    # --- tracking ---------------------------------------------------------------------

    def attach(self, session: Session) -> None:
        """Start persisting ``session``; events it already holds count as pending.
        Attaching the same object again does nothing."""
        self._check_open()
        self._check_writable(session.id)
        tracked = self._tracked.get(session.id)
        if tracked is not None and tracked.session is session:
            return
        if tracked is not None or session.id in self._loading:
            raise SessionConflictError(
                f"another session object with id {session.id!r} is already attached to "
                "this store; detach it first",
                session_id=session.id,
                holder=repr(self),
            )
        self._claim(session.id, stored=False)
        self._tracked[session.id] = _Tracked(session, durable=0, stored=False)

    def detach(self, session: Session) -> None:
        """Stop persisting ``session``. Refused while some of its events are not durable
        (flush first), because detaching would silently drop them from the store. A
        session with no events yet may be detached unstored: nothing is lost."""
        tracked = self._tracked_for(session)
        pending = session.seq - tracked.durable
        if pending:
            raise StoreError(
                f"session {session.id!r} has {pending} event(s) not yet durable "
                f"(from seq {tracked.durable}); flush it before detaching"
            )
        del self._tracked[session.id]
        self._forget(session.id)
        self._disclaim(session.id)

    def load_report(self, session: Session) -> LoadReport:
        """What :meth:`load` found and repaired when it produced ``session``."""
        report = self._tracked_for(session).report
        if report is None:
            raise StoreError(f"session {session.id!r} was attached, not loaded, by this store")
        return report

    # --- flushing ---------------------------------------------------------------------

    async def flush(self, session: Session) -> None:
        """Make every event appended to ``session`` so far durable. A failed write raises
        :class:`StoreError` and stays queued; the next flush retries it first."""
        tracked = self._tracked_for(session)
        self.stats.flushes += 1
        target = session.seq
        wrote = False
        while tracked.durable < target or not tracked.stored:
            await self._call(
                lambda: self._write_pending(tracked), batch_size=session.seq - tracked.durable
            )
            wrote = True
        if wrote:
            self._idle_followers.committed(session.id)

    def _write_pending(self, tracked: _Tracked) -> None:
        session = tracked.session
        events = session.events[tracked.durable :]
        if not events and tracked.stored:
            return  # another flush wrote them while this one waited for the lock
        require_stored(self, events, log_saw_none=not session._state.surface.may_hold_attachments)
        self._commit(Batch(session.id, None if tracked.stored else session.header, events))
        tracked.durable += len(events)
        tracked.stored = True

    def _commit(self, batch: Batch) -> None:
        """Write one batch, counting it and naming what failed."""
        try:
            self._write_batch(batch)
        except SessionConflictError:
            self.stats.failed_writes += 1
            raise  # as itself: the caller must be able to tell a takeover from an I/O error
        except Exception as error:
            self.stats.failed_writes += 1
            events = batch.events
            what = (
                f"events {events[0].seq}..{events[-1].seq} of session {batch.session_id!r}"
                if events
                else f"session {batch.session_id!r}"
            )
            raise StoreError(f"could not write {what} to {self}: {error}") from error
        self.stats.batches_written += 1
        self.stats.events_written += len(batch.events)

    # --- loading and listing ----------------------------------------------------------

    async def load(
        self, session_id: str, *, take_over: bool = False, close_open_turn: bool = True
    ) -> Session:
        """Load a session from durable storage: validated, repaired after a crash (the
        repair and ``session/end-seed`` are durable before this returns), attached.
        With ``take_over`` a store whose ownership lives in the database (PostgreSQL)
        takes the session from a writer that is stuck or gone; that writer's next
        flush raises :class:`SessionConflictError`. With ``close_open_turn=False`` a
        turn the log leaves open is not closed: the caller finishes its interrupted
        step itself (a durable-execution activity, ``dsh_agent.temporal``).

        Raises :class:`SessionNotFoundError`, :class:`SessionFormatError` (newer version,
        unknown required event type), :class:`SessionCorruptError` (damage that is not a
        torn tail), or :class:`StoreError` when the id is attached to this store.
        """
        sid = validate_session_id(session_id)
        self._check_open()
        self._check_writable(sid)
        if sid in self._tracked or sid in self._loading:
            raise SessionConflictError(
                f"session {sid!r} is attached to this store; detach it with "
                "store.detach(session) before loading it again",
                session_id=sid,
                holder=repr(self),
            )
        self._loading.add(sid)
        try:
            claim = self._take_over if take_over else functools.partial(self._claim, stored=True)
            await self._call(lambda: claim(sid), batch_size=0)
            session, report, stored = await self._restore(
                sid, resuming=True, close_open_turn=close_open_turn
            )
            if stored.torn_tail is not None:
                kept = await self._call(lambda: self._set_aside_torn_tail(sid, stored))
                report = dataclasses.replace(report, torn_tail=kept)
            if report.appended or stored.torn_tail is not None:
                repair = Batch(sid, None, report.appended)
                await self._call(lambda: self._commit(repair), batch_size=len(report.appended))
        except BaseException:
            self._forget(sid)
            self._disclaim(sid)
            raise
        finally:
            self._loading.discard(sid)
        if report.torn_tail is not None:
            logger.warning("session %s: %s", sid, report.torn_tail.describe())
        self._tracked[sid] = _Tracked(session, durable=session.seq, stored=True, report=report)
        return session

    async def read(self, session_id: str) -> tuple[Session, LoadReport]:
        """Read a session for inspection without writing anything or attaching it: the
        same validation and in-memory crash repair as :meth:`load` (the closers are in
        the report, not on disk; no ``session/end-seed`` is added), so a process that
        owns the session is never disturbed. Raises what :meth:`load` raises, except
        for attachment."""
        sid = validate_session_id(session_id)
        self._check_open()
        try:
            session, report, _ = await self._restore(sid, resuming=False)
        finally:
            if sid not in self._tracked and sid not in self._loading:
                self._forget(sid)
        return session, report

    async def _restore(
        self, sid: SessionId, *, resuming: bool, close_open_turn: bool = True
    ) -> tuple[Session, LoadReport, StoredLog]:
        stored = await self._call(lambda: self._reading(f"session {sid!r}", self._read_log, sid))
        restore = functools.partial(
            restore_session,
            resuming=resuming,
            close_open_turn=close_open_turn,
            built=stored.session,
        )
        if self._blocking_io:
            session = await asyncio.to_thread(restore, stored.header, stored.events)
        else:
            session = restore(stored.header, stored.events)
        found = stored.attachments()
        if found:
            await self._call(lambda: self._reading("attachments", verify_stored, self, found))
        appended = tuple(session.events[len(stored.events) :])
        return session, LoadReport(torn_tail=stored.torn_tail, appended=appended), stored

    # --- attachments ------------------------------------------------------------------

    async def save_attachment(
        self, data: bytes, *, media_type: str, name: str | None = None
    ) -> AttachmentRef:
        """Store ``data`` once (by its SHA-256) and return the reference a message holds
        (an ``ImageBlock(attachment=...)`` or ``FileBlock``). The bytes are durable when
        this returns, before any event can cite them. Raises
        :class:`AttachmentRefusedError` for bytes :attr:`attachment_limits` refuse or
        that are not the image ``media_type`` says, :class:`StoreError` when the write
        fails or the store is read-only."""
        self._check_open()
        if self.read_only:
            raise StoreError(f"{self} was opened read-only; it cannot store attachments")
        data = bytes(data)  # a bytearray or memoryview the caller may change later
        ref = checked_ref(data, media_type, name, self.attachment_limits)
        sha = ref.sha256

        def put() -> None:
            try:
                self._put_blob(sha, data)
            except SessionError:
                raise
            except Exception as error:
                raise StoreError(
                    f"could not store attachment {ref.attachment_id}: {error}"
                ) from error
            self._stored_blobs.add(sha)

        await self._call(put)
        return ref

    async def read_attachment(self, ref: AttachmentRef) -> bytes:
        """The stored bytes of ``ref``, checked against its hash: what adapters send.
        Raises :class:`AttachmentNotFoundError` or :class:`AttachmentCorruptError`."""
        self._check_open()
        return await self._call(lambda: self._reading("attachments", read_checked, self, ref))

    def follow(
        self, session_id: str, *, from_seq: int = 0, poll_interval: float = 0.1
    ) -> AsyncGenerator[LogEvent, None]:
        """The session's durable events from ``from_seq`` on, in order, as any process
        commits them: first those stored already, then each new one, until the caller
        stops iterating or the store is closed. Raises :class:`SessionNotFoundError`
        when the session is not stored. This backend polls every ``poll_interval``
        seconds for what other processes write, and wakes at once when a flush through
        this store object commits to the session; PostgreSQL is woken by ``NOTIFY``."""
        check_from_seq(from_seq)
        return poll_events(self, validate_session_id(session_id), from_seq, poll_interval)

    async def list_sessions(self) -> list[SessionHeader]:
        """Headers of the sessions in durable storage, oldest first. A session that was
        attached but never flushed is not listed yet."""
        self._check_open()
        headers = await self._call(lambda: self._reading("sessions", self._read_headers))
        return sorted(headers, key=lambda header: (header.created_at, header.id))

    async def resolve_session_id(self, given: str) -> SessionId:
        """The full id of the stored session ``given`` names: ``given`` itself when a
        listed session has that id, else the one listed id that starts with it (what a
        person types, e.g. ``01a2386e-f8``). :meth:`load`, :meth:`read` and
        :meth:`delete` take exact ids only, so a program's own short ids (``user-1``
        beside ``user-12``) never name another session; resolve first when the id comes
        from a person. Raises :class:`AmbiguousSessionIdError` listing the candidates,
        or :class:`SessionNotFoundError` (also for a session whose header is too
        damaged to be listed: :meth:`read` it by its full id to see why)."""
        ids = [header.id for header in await self.list_sessions()]
        if given in ids:
            return SessionId(given)
        matches = tuple(sid for sid in ids if given and sid.startswith(given))
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise AmbiguousSessionIdError(given, matches, repr(self))
        raise SessionNotFoundError(given, repr(self))

    async def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        role: str | None = None,
        limit: int = 20,
    ) -> list[SearchHit]:
        """The stored messages that match ``query``, best first, at most ``limit``: in
        every session, or in ``session_id`` only, of every role or of ``role`` only
        (``"user"``, ``"assistant"``). Only durable events are searched. The query
        language (words, ``"phrases"``, ``prefix*``, ``AND``/``OR``/``NOT``,
        parentheses) is the same on every backend, and so is the set of hits; the order
        among them is each backend's own ranking (docs/search.md).

        Raises :class:`SearchQueryError` for a query that cannot be parsed and
        :class:`SessionNotFoundError` for a ``session_id`` that is not stored."""
        parsed = parse_query(query)
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        sid = None if session_id is None else validate_session_id(session_id)
        self._check_open()
        return await self._call(
            lambda: self._reading("search results", self._search, parsed, sid, role, limit)
        )

    async def reindex(self) -> int:
        """Rebuild the search index from the logs alone, dropping whatever it held, and
        return how many messages it now holds (0 for a backend that searches by
        scanning, JSONL and memory). Refused on a read-only store."""
        self._check_open()
        if self.read_only:
            raise StoreError(f"{self} was opened read-only; its search index cannot be rebuilt")
        return await self._call(lambda: self._reading("the logs to index", self._reindex))

    async def delete(self, session_id: str) -> None:
        """Remove a stored session for good, all or nothing: after a crash mid-delete the
        session loads whole or is gone. A fork of it keeps its own copy of the events
        it took and still loads (docs/decisions/2026-12-03-session-delete.md).

        Raises :class:`SessionConflictError` while a writer owns the session (attached
        to this store, or held by another store object or process; nothing is
        removed), :class:`SessionNotFoundError` when there is none, and
        :class:`StoreError` on a read-only store or when the removal fails."""
        sid = validate_session_id(session_id)
        self._check_open()
        if self.read_only:
            raise StoreError(f"{self} was opened read-only; session {sid!r} cannot be deleted")
        if sid in self._tracked or sid in self._loading:
            raise SessionConflictError(
                f"session {sid!r} is attached to this store; detach it before deleting it",
                session_id=sid,
                holder=repr(self),
            )
        await self._call(lambda: self._delete_owned(sid), batch_size=0)

    def _delete_owned(self, sid: SessionId) -> None:
        """Own the session (refused while a writer holds it), remove it, let it go."""
        self._claim(sid, stored=False)
        try:
            self._delete_log(sid)
        except SessionError:
            raise
        except Exception as error:
            raise StoreError(f"could not delete session {sid!r} from {self}: {error}") from error
        finally:
            self._forget(sid)
            self._disclaim(sid)

    def _delete_log(self, session_id: SessionId) -> None:
        """Remove a stored session, all or nothing as far as a later load can tell; raise
        :class:`SessionNotFoundError` when there is none. Called while owning it."""
        raise StoreError(f"{self} cannot delete sessions")

    # --- lifetime ---------------------------------------------------------------------

    async def close(self) -> None:
        """Flush every attached session, then release the backend and with it the
        ownership of every session. The backend is released even when a flush fails;
        the failure is raised afterwards, naming the sessions whose events are not
        durable (they are still in the session objects): as a
        :class:`SessionConflictError` if another writer took one of them over."""
        if self._closed:
            return
        failures: list[StoreError] = []
        for tracked in list(self._tracked.values()):
            try:
                await self.flush(tracked.session)
            except StoreError as error:
                failures.append(error)
        self._closed = True
        self._end_followers()
        await self._call(self._release, batch_size=0)
        self._tracked.clear()
        if failures:
            message = "closed with events that are not durable: " + "; ".join(map(str, failures))
            conflict = next((e for e in failures if isinstance(e, SessionConflictError)), None)
            if conflict is not None:  # still the caller's to recognise as a takeover
                raise SessionConflictError(
                    message, session_id=conflict.session_id, holder=conflict.holder
                ) from conflict
            raise StoreError(message)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # --- helpers ----------------------------------------------------------------------

    def _reading(self, what: str, read: Callable[..., T], *args: Any) -> T:
        """Run a backend read; an I/O or driver failure becomes a :class:`StoreError`
        (the session errors a read raises on purpose pass through)."""
        try:
            return read(*args)
        except SessionError:
            raise
        except Exception as error:
            raise StoreError(f"could not read {what} from {self}: {error}") from error

    async def _call(self, call: Callable[[], T], *, batch_size: int | None = None) -> T:
        """Run one blocking backend call while holding the store's I/O lock: inline when
        the backend does no blocking I/O or the call writes at most the inline limit of
        events, else on a worker thread. The lock is released when the call finishes,
        not when the awaiting task does: a cancelled flush cannot let another write
        start while its own is still running."""
        await self._io_lock.acquire()
        inline = not self._blocking_io or (
            batch_size is not None and batch_size <= self._inline_batch_limit
        )
        if inline:
            try:
                return call()
            finally:
                self._io_lock.release()
        if batch_size is not None:
            self.stats.threaded_writes += 1
        task = asyncio.ensure_future(asyncio.to_thread(call))
        task.add_done_callback(self._release_io_lock)
        return await asyncio.shield(task)

    def _release_io_lock(self, task: asyncio.Future[Any]) -> None:
        if not task.cancelled():
            task.exception()  # retrieved here too: a cancelled caller no longer awaits it
        self._io_lock.release()

    def _end_followers(self) -> None:
        """Wake every follower waiting for more, so that each sees the store closed."""
        self._idle_followers.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self} is closed")

    def _check_writable(self, session_id: SessionId) -> None:
        if self.read_only:
            raise StoreError(
                f"{self} was opened read-only; session {session_id!r} can be read "
                "(store.read) but not attached or loaded"
            )

    def _tracked_for(self, session: Session) -> _Tracked:
        tracked = self._tracked.get(session.id)
        if tracked is None or tracked.session is not session:
            self._check_open()
            raise StoreError(f"session {session.id!r} is not attached to this store")
        return tracked


__all__ = [
    "INLINE_BATCH_LIMIT",
    "Batch",
    "SessionStore",
    "StoreMode",
    "StoreStats",
]
