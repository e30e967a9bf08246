"""The followers of a store's sessions that have read everything and wait for more.

A service keeps a follower open for every stream a client watches, and most of them
wait, most of the time. Each waiting follower polling on its own cost a timer, a hop
to a worker thread and a look at its log per poll: with a few hundred open streams
that alone filled a core. So the waits are kept here, in one object per store: a
commit through the store wakes its followers at once, and one look per poll interval,
at the versions of every waiting follower's log together (:meth:`SessionStore.
_log_versions`, one backend call), wakes only those whose log moved. A follower woken
reads for itself, from its own seq, so a wake-up too many costs a read, never an
event; one too few cannot happen, since a follower arms its wait before its read.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable, Sequence

from dsh_session._header import SessionId

VersionLook = Callable[[Sequence[SessionId]], Awaitable[dict[SessionId, Hashable | None]]]
"""Reads the versions of the given sessions' logs, one backend call for all of them."""


class Wait:
    """One follower's wait for its session's log to move."""

    __slots__ = ("done", "interval", "seen", "session_id")

    def __init__(self, session_id: SessionId, done: asyncio.Future[None]) -> None:
        self.session_id = session_id
        self.done = done
        self.seen: Hashable | None = None
        """The log's version when the follower last read it."""
        self.interval: float | None = None
        """The poll interval it is looked at with, once it waits."""

    def wake(self) -> None:
        if not self.done.done() and not self.done.get_loop().is_closed():
            self.done.set_result(None)


class IdleFollowers:
    """The waits of one store's followers, woken by its commits and by shared looks."""

    __slots__ = ("_armed", "_closed", "_look", "_looking", "_tickers")

    def __init__(self, look: VersionLook) -> None:
        self._look = look
        self._armed: dict[SessionId, set[Wait]] = {}
        self._looking: dict[float, set[Wait]] = {}
        self._tickers: dict[float, asyncio.Task[None]] = {}
        self._closed = False

    def arm(self, session_id: SessionId) -> Wait:
        """A wait that the next commit to ``session_id`` through this store wakes: armed
        before the follower reads, so a commit between its read and its wait is seen."""
        wait = Wait(session_id, asyncio.get_running_loop().create_future())
        self._armed.setdefault(session_id, set()).add(wait)
        return wait

    def committed(self, session_id: SessionId) -> None:
        """Events of ``session_id`` were just made durable here: wake its followers."""
        if not self._armed:  # no follower here: the common case, without a failed pop
            return
        for wait in self._armed.pop(session_id, ()):
            wait.wake()

    async def until_moved(self, wait: Wait, seen: Hashable | None, interval: float) -> None:
        """Return once ``wait`` is woken: by a commit through this store, by a look (every
        ``interval`` seconds) that finds the log's version other than ``seen`` or finds
        none, or by :meth:`close` (at once once closed)."""
        if self._closed:
            return
        wait.seen, wait.interval = seen, interval
        self._looking.setdefault(interval, set()).add(wait)
        ticker = self._tickers.get(interval)
        loop = asyncio.get_running_loop()
        if ticker is None or ticker.done() or ticker.get_loop() is not loop:
            self._tickers[interval] = loop.create_task(self._tick(interval))
        await wait.done

    def disarm(self, wait: Wait) -> None:
        """Forget ``wait`` (its follower read something, or stopped)."""
        armed = self._armed.get(wait.session_id)
        if armed is not None:
            armed.discard(wait)
            if not armed:
                del self._armed[wait.session_id]
        if wait.interval is not None:
            self._looking.get(wait.interval, set()).discard(wait)

    def close(self) -> None:
        """Wake every wait (the store is closing, so each follower ends) and stop."""
        self._closed = True
        waits = [wait for armed in self._armed.values() for wait in armed]
        waits += [wait for looking in self._looking.values() for wait in looking]
        self._armed.clear()
        self._looking.clear()
        for wait in waits:
            wait.wake()
        for ticker in self._tickers.values():
            if not ticker.get_loop().is_closed():
                ticker.cancel()
        self._tickers.clear()

    async def _tick(self, interval: float) -> None:
        """Look every ``interval`` at the logs of the followers waiting with it; end when
        none waits any more."""
        while True:
            await asyncio.sleep(interval)
            looking = self._looking.get(interval)
            if not looking:
                self._looking.pop(interval, None)
                return
            waits = list(looking)
            versions: dict[SessionId, Hashable | None] = {}
            with contextlib.suppress(Exception):  # each woken follower's read says why
                versions = await self._look(list({wait.session_id for wait in waits}))
            for wait in waits:
                version = versions.get(wait.session_id)
                if version is None or version != wait.seen:
                    wait.wake()


__all__ = ["IdleFollowers", "VersionLook", "Wait"]
