"""Workers: processes that own and run the sessions that have mailbox input.

A worker scans its store's mailbox for sessions with unanswered entries (woken by
``NOTIFY`` on PostgreSQL, polling elsewhere) and serves up to ``concurrency`` of them at
once. Serving a session is: load it (which claims it through the store's fencing: an
OS lock for SQLite and JSONL, the ownership token and epoch for PostgreSQL, and
repairs what a crashed owner left), build its loop with ``agent_factory``, drain its
mailbox beside the running turns, and once it has been idle for ``idle_release``
seconds close the loop (flushing it) and give the session up. A session another
worker holds is skipped and looked at again on the next scan, so when a worker dies
(its locks die with its process, its PostgreSQL connection with it), another takes its
sessions over at its next scan: within ``scan_interval`` seconds on SQLite and JSONL,
at once on PostgreSQL after the server notices the dead connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Self, TypeAlias

from dsh_agent._engine.loop import AgentLoop
from dsh_agent._service._drain import MailboxDrain
from dsh_session._header import SessionId
from dsh_session._mailbox._base import Mailbox
from dsh_session._mailbox._open import open_mailbox
from dsh_session._session import Session
from dsh_session.errors import SessionConflictError, SessionError
from dsh_session.stores import SessionStore

logger = logging.getLogger(__name__)

SessionAgentFactory: TypeAlias = Callable[[Session, SessionStore], AgentLoop | Awaitable[AgentLoop]]
"""Builds the loop of a loaded session (model, tools, settings), with ``store=store``."""


class Worker:
    """Serves the sessions of ``store`` that have mailbox input, at most
    ``concurrency`` at a time: ``async with Worker(store, agent_factory): ...``.
    ``on_loop`` is called with each loop built, before its first turn."""

    def __init__(
        self,
        store: SessionStore,
        agent_factory: SessionAgentFactory,
        *,
        concurrency: int = 16,
        idle_release: float = 2.0,
        scan_interval: float = 0.2,
        on_loop: Callable[[AgentLoop], None] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency!r}")
        self.store = store
        self.agent_factory = agent_factory
        self.concurrency = concurrency
        self.idle_release = idle_release
        self.scan_interval = scan_interval
        self.on_loop = on_loop
        """Called with each loop the worker builds, before it can start a turn: the
        place to observe it (``loop.subscribe``, ``loop.updates()``), e.g. to relay its
        model text live as ``dsh serve`` does."""
        self.served = 0
        """Sessions taken and given up again so far."""
        self._mailbox: Mailbox | None = None
        self._serving: dict[SessionId, asyncio.Task[None]] = {}
        self._stop = asyncio.Event()
        self._poke = asyncio.Event()
        self._scanner: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        self._mailbox = open_mailbox(self.store)
        self._scanner = asyncio.create_task(self._scan())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def stop(self) -> None:
        """Stop taking sessions; close every served loop (a running turn is aborted
        with cause ``disposed``, its input stays in the durable inbox) and give the
        sessions up."""
        self._stop.set()
        self._poke.set()
        tasks = [t for t in (self._scanner, *self._serving.values()) if t is not None]
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._mailbox is not None:
            await self._mailbox.close()
            self._mailbox = None

    async def serve_forever(self) -> None:
        """Run until cancelled (what ``dsh worker`` does)."""
        await self._stop.wait()

    # --- scanning -------------------------------------------------------------------------

    async def _scan(self) -> None:
        mailbox = self._mailbox
        assert mailbox is not None
        while not self._stop.is_set():
            try:
                for sid in await mailbox.waiting():
                    if sid not in self._serving and len(self._serving) < self.concurrency:
                        self._serving[sid] = asyncio.create_task(self._serve(sid, mailbox))
            except SessionError:
                logger.exception("worker: cannot scan the mailbox of %r", self.store)
            self._poke.set()  # the sessions served look at their mailboxes again
            self._poke = asyncio.Event()
            await mailbox.wait(self.scan_interval)

    async def _serve(self, sid: SessionId, mailbox: Mailbox) -> None:
        try:
            try:
                session = await self.store.load(sid)
            except SessionConflictError:
                return  # another worker owns it; looked at again on the next scan
            loop = await self._build(session)
            try:
                if self.on_loop is not None:
                    self.on_loop(loop)
                drain = MailboxDrain(loop, mailbox)  # before the wake: it tells claims apart
                if loop.inbox.has_pending and loop.status == "idle":
                    loop._driver.wake()  # input a crashed owner took in but never ran
                await self._run(loop, drain)
            finally:
                await loop.aclose()
                self.store.detach(session)
            self.served += 1
        except Exception:
            logger.exception("worker: serving session %s failed", sid)
        finally:
            del self._serving[sid]

    async def _build(self, session: Session) -> AgentLoop:
        built = self.agent_factory(session, self.store)
        loop = await built if inspect.isawaitable(built) else built
        if loop.config.store is not self.store:
            await loop.aclose()
            raise TypeError(
                f"agent_factory built the loop of session {session.id!r} without "
                "store=store: a worker's loops must persist to its store"
            )
        return loop

    async def _run(self, loop: AgentLoop, drain: MailboxDrain) -> None:
        """Drain until idle for ``idle_release`` seconds (or the worker stops)."""
        quiet_since = time.monotonic()
        while not self._stop.is_set():
            if await drain.drain() or loop.status == "running":
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= self.idle_release:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._poke.wait(), self.scan_interval)


__all__ = ["SessionAgentFactory", "Worker"]
