"""Resume in one argument: what ``AgentLoop.open(store=..., session_id=...)`` does
before the loop is built (docs/decisions/2026-12-06-resume-in-one-argument.md).

A constructor cannot await, and loading a log is I/O, so ``open`` returns a
:class:`LoopOpening`: awaiting it loads (or creates) the session and builds the loop;
``async with`` does the same and closes the loop on the way out. The session is then
the loop's: its ``aclose()`` flushes it and detaches it from the store, so the store
(the caller's, shared by many loops) can load it again. A store the loop opened itself
from a URL is the loop's too, shared with the branches its ``edit()`` makes, and
closed with the last of them (:class:`StoreLease`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from dsh_session._session import Session
from dsh_session.errors import SessionNotFoundError

if TYPE_CHECKING:
    from dsh_session.stores import SessionStore


class _Closable(Protocol):
    async def aclose(self) -> None: ...


LoopT = TypeVar("LoopT", bound=_Closable)


class StoreLease:
    """A store a loop opened from a URL: closed when the last loop using it (the loop
    and the branches of its ``edit()``) lets it go."""

    __slots__ = ("_users", "store")

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._users = 1

    def share(self) -> StoreLease:
        """One more loop uses the store."""
        self._users += 1
        return self

    async def release(self) -> None:
        """One loop is done with the store; the last one closes it."""
        self._users -= 1
        if self._users == 0:
            await self.store.close()


def store_of(store: SessionStore | str | None) -> tuple[SessionStore | None, StoreLease | None]:
    """The store a loop is given, and its lease when the loop opens it from a URL
    (``"sqlite:///agent.db"``, see :func:`dsh_session.stores.open_store`)."""
    if isinstance(store, str):
        from dsh_session.stores import open_store  # the backends load when one is used

        opened = open_store(store)
        return opened, StoreLease(opened)
    return store, None


async def load_or_create(store: SessionStore, session_id: str | None) -> Session:
    """The stored session ``session_id``, loaded (and repaired after a crash), or a new
    one with that id (a minted one when ``None``), stored before this returns, so a
    second process creating the same id is refused rather than writing a second
    header. Whatever the store refuses (a corrupt log, a session another writer owns)
    raises as the store raised it, with nothing attached."""
    if session_id is not None:
        try:
            return await store.load(session_id)
        except SessionNotFoundError:
            pass
    session = Session.create(session_id)
    store.attach(session)
    try:
        await store.flush(session)
    except BaseException:
        store.detach(session)  # nothing of it is stored: detaching loses nothing
        raise
    return session


async def open_loop(
    build: Callable[[Session, SessionStore, StoreLease | None], LoopT],
    store: SessionStore | str | None,
    session_id: str | None,
) -> LoopT:
    """Load or create the session in ``store`` and ``build`` the loop over it; on any
    failure nothing stays held (the session detached, the loop's own store closed)."""
    given, lease = store_of(store)
    if given is None:
        raise TypeError(
            "AgentLoop.open() needs a store (an object or a URL such as "
            "'sqlite:///agent.db') to load the session from; for a session kept in "
            "memory only, build AgentLoop(...) without one"
        )
    try:
        session = await load_or_create(given, session_id)
        try:
            return build(session, given, lease)
        except BaseException:
            given.detach(session)
            raise
    except BaseException:
        if lease is not None:
            await lease.release()
        raise


class LoopOpening(Generic[LoopT]):
    """What ``AgentLoop.open(...)`` returns: ``await`` it for the open loop, or enter
    it with ``async with`` (the loop is closed on the way out). Used once."""

    __slots__ = ("_loop", "_open", "_used")

    def __init__(self, open_loop: Callable[[], Awaitable[LoopT]]) -> None:
        self._open = open_loop
        self._used = False
        self._loop: LoopT | None = None

    async def _opened(self) -> LoopT:
        if self._used:
            raise RuntimeError("this AgentLoop.open(...) was already awaited or entered")
        self._used = True
        return await self._open()

    def __await__(self) -> Generator[Any, None, LoopT]:
        return self._opened().__await__()

    async def __aenter__(self) -> LoopT:
        self._loop = await self._opened()
        return self._loop

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._loop is not None:
            await self._loop.aclose()


__all__ = [
    "LoopOpening",
    "StoreLease",
    "load_or_create",
    "open_loop",
    "store_of",
]
