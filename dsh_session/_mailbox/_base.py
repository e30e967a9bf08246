"""The mailbox every backend shares: a per-session durable queue of delivery requests
beside the log, so a process that does not own a session can still reach it.

The log stays single-writer: clients only append entries here, and the session's owner
answers them (``applied`` or ``refused``) after acting on them. An entry is never
removed: it is the record that makes a repeated delivery return its first receipt.
Backends implement five blocking primitives (and may answer ``pending`` and ``find``
from an index); the async methods run them one at a time, on a worker thread when the
backend blocks on I/O. A worker polls ``waiting`` many times a second, so every backend
answers it from what waits, never by reading every session's history.
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TypeVar

from dsh_session._header import SessionId
from dsh_session._mailbox._records import MailboxAnswer, MailboxEntry, StoredEntry
from dsh_session.errors import DeliveryConflictError

T = TypeVar("T")

DEFAULT_POLL_INTERVAL = 0.05
"""Seconds between looks for new entries where nothing wakes the owner."""


class Mailbox(ABC):
    """The delivery requests of every session of one store."""

    _blocking_io = True

    def __init__(self, *, poll_interval: float = DEFAULT_POLL_INTERVAL) -> None:
        self.poll_interval = poll_interval
        self._lock = threading.Lock()

    # --- backend primitives (blocking, one at a time) -----------------------------------

    @abstractmethod
    def _put(self, entry: MailboxEntry) -> tuple[StoredEntry, bool]:
        """Store ``entry`` durably at the end of its session's queue, unless an entry with
        its key exists: return the stored entry and whether it was added now. Atomic
        against other processes delivering the same key."""

    @abstractmethod
    def _entries(self, session_id: SessionId, from_arrival: int = 0) -> list[StoredEntry]:
        """The session's entries from arrival ``from_arrival`` on, in arrival order, with
        their answers if any."""

    @abstractmethod
    def _answer(self, session_id: SessionId, key: str, answer: MailboxAnswer) -> None:
        """Record the owner's answer to an entry durably (a second answer is ignored)."""

    @abstractmethod
    def _waiting(self) -> list[SessionId]:
        """The sessions that have entries without an answer."""

    def _pending(self, session_id: SessionId) -> list[StoredEntry]:
        """The session's unanswered entries in arrival order. Backends with an index of
        them override this, so a long-lived session's answered history is not read
        at every drain."""
        return [stored for stored in self._entries(session_id) if stored.answer is None]

    def _find(self, session_id: SessionId, key: str) -> StoredEntry | None:
        """The session's entry with ``key``. Backends override this with a lookup by
        key."""
        return next((s for s in self._entries(session_id) if s.entry.key == key), None)

    def _close(self) -> None:  # noqa: B027 - optional hook
        """Release files and connections."""

    # --- the async surface ------------------------------------------------------------

    async def put(self, entry: MailboxEntry) -> StoredEntry:
        """Make ``entry`` durable, or find the first delivery with its key: equal content
        returns that one unchanged, other content raises :class:`DeliveryConflictError`
        (nothing written)."""
        stored, _ = await self._run(lambda: self._put(entry))
        if stored.entry.content() != entry.content():
            raise DeliveryConflictError(
                entry.session_id, entry.key, stored.entry.content(), entry.content()
            )
        return stored

    async def entries(self, session_id: SessionId, *, from_arrival: int = 0) -> list[StoredEntry]:
        """The session's entries in arrival order, from arrival ``from_arrival`` on (an
        answer never changes once given, so a reader that has seen every entry before
        the first unanswered one need not read them again). Raises ``ValueError`` for
        a ``from_arrival`` that is not an int >= 0."""
        if isinstance(from_arrival, bool) or not isinstance(from_arrival, int) or from_arrival < 0:
            raise ValueError(f"from_arrival must be an int >= 0, not {from_arrival!r}")
        return await self._run(lambda: self._entries(session_id, from_arrival))

    async def find(self, session_id: SessionId, key: str) -> StoredEntry | None:
        """The entry with ``key``, if the session's mailbox holds one."""
        return await self._run(lambda: self._find(session_id, key))

    async def pending(self, session_id: SessionId) -> list[StoredEntry]:
        """The entries the owner has not answered yet, in arrival order."""
        return await self._run(lambda: self._pending(session_id))

    async def answer(self, session_id: SessionId, key: str, answer: MailboxAnswer) -> None:
        await self._run(lambda: self._answer(session_id, key, answer))

    async def waiting(self) -> list[SessionId]:
        """Sessions with unanswered entries (what a worker serves)."""
        return await self._run(self._waiting)

    async def wait(self, timeout: float) -> None:
        """Return when new entries may have arrived, at the latest after ``timeout``
        seconds. This backend polls; PostgreSQL is woken by ``NOTIFY``."""
        await asyncio.sleep(min(timeout, self.poll_interval))

    async def close(self) -> None:
        await self._run(self._close)

    async def _run(self, call: Callable[[], T]) -> T:
        if not self._blocking_io:
            return call()
        return await asyncio.to_thread(self._locked, call)

    def _locked(self, call: Callable[[], T]) -> T:
        with self._lock:
            return call()


__all__ = ["DEFAULT_POLL_INTERVAL", "Mailbox"]
