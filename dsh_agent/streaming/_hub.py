"""The update streams of one agent loop: ``agent.updates()``.

The hub makes each stream (subscribed at once, so nothing after the call is missed),
ends every stream still open when the loop closes, and keeps the start of a branch
that ``edit()`` built: the branch's first turn opens before ``edit()`` returns, so
the caller cannot subscribe in time; the hub records from the branch's birth and
gives that recording to the branch's first ``updates()`` call, or drops it when the
branch is first idle with nobody having asked.

The hub holds no agent: each call is given one, so an idle loop stays free of
reference cycles (docs/decisions/2026-12-04-agent-loop-lifetime.md).
"""

from __future__ import annotations

from dsh_agent.streaming._stream import (
    DEFAULT_MAX_PENDING,
    StreamedAgent,
    UpdateStream,
    _Buffer,
    observe,
)


class UpdateHub:
    """Makes, ends and (for a branch) pre-records the update streams of one loop."""

    __slots__ = ("_open", "_start")

    def __init__(self) -> None:
        self._open: list[_Buffer] = []
        """The buffers of streams still observing, to end when the loop closes."""
        self._start: _Buffer | None = None
        """A branch's recording from its birth, until claimed or first idle."""

    def updates(
        self, agent: StreamedAgent, *, until_idle: bool, max_pending: int, merge_deltas: bool
    ) -> UpdateStream:
        """A stream of ``agent``'s updates from now on (or from the branch's birth)."""
        buffer, self._start = self._start, None
        if buffer is not None and buffer.observing:
            if max_pending < 1:
                raise ValueError(f"max_pending must be at least 1, not {max_pending}")
            buffer.on_idle = None
            buffer.until_idle = until_idle
            buffer.max_pending = max_pending
            buffer.merge_deltas = merge_deltas
        else:
            buffer = self._watch(agent, until_idle, max_pending, merge_deltas)
        return UpdateStream(buffer)

    def record_start(self, agent: StreamedAgent) -> None:
        """Record ``agent``'s updates for its first ``updates()`` call (each delta as
        it comes: the claimant's ``merge_deltas`` applies from then on)."""
        buffer = self._watch(agent, False, DEFAULT_MAX_PENDING, False)

        def drop_unclaimed() -> None:
            if self._start is buffer:
                self._start = None
            buffer.end()
            buffer.pending.clear()

        buffer.on_idle = drop_unclaimed
        self._start = buffer

    def close(self) -> None:
        """The loop closed: every open stream ends once its buffer is delivered."""
        self._start = None
        for buffer in tuple(self._open):
            buffer.end()

    def _watch(
        self, agent: StreamedAgent, until_idle: bool, max_pending: int, merge_deltas: bool
    ) -> _Buffer:
        buffer = observe(
            agent, max_pending=max_pending, merge_deltas=merge_deltas, until_idle=until_idle
        )
        self._open.append(buffer)
        buffer.unsubscribes.append(lambda: self._forget(buffer))
        return buffer

    def _forget(self, buffer: _Buffer) -> None:
        if buffer in self._open:
            self._open.remove(buffer)


__all__ = [
    "UpdateHub",
]
