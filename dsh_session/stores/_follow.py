"""Following a session's log as other processes write it, by polling the store.

A follower reads the events from the next seq it has not delivered, delivers them in
order, and sleeps; it checks each batch's seqs, so a gap is an error, never a silently
skipped event. Only durable events are seen (a store reads what was committed), and
the log only ever grows, so a delivered event is never taken back. A flush through the
same store object wakes its followers at once (:class:`LocalCommits`): the poll is
only for what other processes (or other store objects) write. Where the store has a
cheap version of a log (a file's size and time, a row's revision), a poll that finds it
unchanged since the follower's last read reads nothing more: an idle follower of a long
log costs a look, not a read.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import weakref
from collections.abc import AsyncGenerator, Callable, Hashable, Sequence
from typing import Any, Protocol, TypeVar

from dsh_session._header import SessionId
from dsh_session.errors import SessionCorruptError
from dsh_session.events import LogEvent, SessionEvent

T = TypeVar("T")


class LocalCommits:
    """Wakes this store's followers of a session when this store commits to it.

    A follower arms before each read and waits on what it armed, so a commit between
    its read and its wait is never missed; an armed event lives only while a follower
    holds it (so following many sessions leaves nothing behind)."""

    __slots__ = ("_armed",)

    def __init__(self) -> None:
        self._armed: weakref.WeakValueDictionary[SessionId, asyncio.Event] = (
            weakref.WeakValueDictionary()
        )

    def arm(self, session_id: SessionId) -> asyncio.Event:
        """The event the next commit to ``session_id`` sets."""
        event = self._armed.get(session_id)
        if event is None:
            event = self._armed[session_id] = asyncio.Event()
        return event

    def committed(self, session_id: SessionId) -> None:
        """Events of ``session_id`` were just made durable: wake its followers."""
        if not self._armed:  # no follower here: the common case, without a failed pop
            return
        event = self._armed.pop(session_id, None)
        if event is not None:
            event.set()


class FollowedStore(Protocol):
    """What a follower uses of a store: its internals, which every ``SessionStore`` has
    (named here so that this module does not import the store it serves)."""

    _closed: bool
    _local_commits: LocalCommits

    def _check_open(self) -> None: ...

    def _read_events(self, session_id: SessionId, from_seq: int) -> list[LogEvent]: ...

    def _log_version(self, session_id: SessionId) -> Hashable | None: ...

    def _reading(self, what: str, read: Callable[..., T], *args: Any) -> T: ...

    async def _call(self, call: Callable[[], T], *, batch_size: int | None = None) -> T: ...


def check_from_seq(from_seq: int) -> None:
    """Refuse a start that names no seq."""
    if isinstance(from_seq, bool) or not isinstance(from_seq, int) or from_seq < 0:
        raise ValueError(f"from_seq must be an int >= 0, not {from_seq!r}")


def in_order(
    events: Sequence[SessionEvent], next_seq: int, session_id: SessionId, where: str
) -> None:
    """Raise :class:`SessionCorruptError` unless ``events`` are seq ``next_seq``, ``+1``..."""
    for offset, event in enumerate(events):
        if event.seq != next_seq + offset:
            raise SessionCorruptError(
                f"{where}: following session {session_id!r}, expected seq "
                f"{next_seq + offset}, read seq {event.seq}",
                seq=next_seq + offset,
            )


async def poll_events(
    store: FollowedStore, session_id: SessionId, from_seq: int, interval: float
) -> AsyncGenerator[LogEvent, None]:
    """Follow ``session_id`` in ``store`` by reading its new events every ``interval``,
    and at once after each flush through ``store`` (``from_seq`` is checked by the
    caller)."""
    store._check_open()
    next_seq, seen = from_seq, None
    while not store._closed:
        woken = store._local_commits.arm(session_id)  # before the read: no commit missed
        read = functools.partial(
            store._reading, f"session {session_id!r}", _changes, store, session_id, next_seq, seen
        )
        seen, events = await store._call(read)
        in_order(events, next_seq, session_id, repr(store))
        for event in events:
            yield event
            next_seq += 1
        if not events:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(woken.wait(), interval)


def _changes(
    store: FollowedStore, session_id: SessionId, from_seq: int, seen: Hashable | None
) -> tuple[Hashable | None, list[LogEvent]]:
    """The log's version, then its events from ``from_seq`` unless the version is the
    one ``seen`` before the last read (then nothing was committed since that read
    began). The version is read first, so a commit racing the read changes it."""
    version = store._log_version(session_id)
    if version is not None and version == seen:
        return version, []
    return version, store._read_events(session_id, from_seq)


__all__ = [
    "FollowedStore",
    "LocalCommits",
    "check_from_seq",
    "in_order",
    "poll_events",
]
