"""A private event loop in a thread of its own, shared by the sync agents on it.

A :class:`~dsh_agent.streaming._sync.SyncAgent` and the branches its edits open run
on one loop (the branch's agent was built there, with the same store); the loop is
stopped, its async generators and default executor shut down, and its thread joined
once the last of them is closed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from dsh_agent.errors import AgentError

T = TypeVar("T")


class LoopThread:
    """An event loop served by a daemon thread, with a count of its users."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="dsh-sync-agent", daemon=True)
        self._lock = threading.Lock()
        self._users = 1
        self._thread.start()

    def _serve(self) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

    @property
    def stopped(self) -> bool:
        return self._loop.is_closed()

    def call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and wait for it; refused from the loop itself
        (a tool or handler calling its own sync agent would wait forever)."""
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise AgentError("a SyncAgent was called from its own loop (a tool or handler)")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def retain(self) -> None:
        """One more sync agent runs on this loop."""
        with self._lock:
            self._users += 1

    def release(self) -> None:
        """One sync agent is done; the last one stops the loop and joins the thread."""
        with self._lock:
            self._users -= 1
            last = self._users == 0
        if last:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()


__all__ = [
    "LoopThread",
]
