"""A public, immutable view of the surface: each position and the event that holds it.

Users writing their own replaces need the current positions and the seqs that hold
them (a ``Replace`` names the first and last holder). The view is O(1) to take and never
changes once returned: the surface's node list only ever grows in place, and a replace
builds a new list (the trick of :mod:`dsh_session._views`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import cast, overload

from dsh_llm._messages import Message
from dsh_session.events import (
    AssistantMessageEvent,
    LogEvent,
    SessionEvent,
    ToolResultEvent,
    UserMessageEvent,
)


def message_of(event: SessionEvent) -> Message | None:
    """The message a surface event carries (``None`` for other events)."""
    # The exact classes first: a failed ``isinstance`` of a pydantic class costs more.
    cls = type(event)
    if cls is UserMessageEvent:
        return event.data  # type: ignore[no-any-return]
    if cls is AssistantMessageEvent or cls is ToolResultEvent:
        return event.data.message  # type: ignore[no-any-return]
    if isinstance(event, UserMessageEvent):
        return event.data
    if isinstance(event, (AssistantMessageEvent, ToolResultEvent)):
        return event.data.message
    return None


@dataclass(frozen=True, slots=True)
class SurfaceNode:
    """One surface position and the event holding it."""

    position: int
    """0-based position on the surface (the model sees positions in order)."""
    event: LogEvent
    """The surface event (``user/message``, ``assistant/message``, ``tool/result``)."""

    @property
    def seq(self) -> int:
        return self.event.seq

    @property
    def message(self) -> Message:
        """The message this position holds (an empty assistant message included)."""
        message = message_of(self.event)
        assert message is not None, "only surface events hold surface positions"
        return message


class SurfaceView(Sequence[SurfaceNode]):
    """The surface at one moment: ``view[i]`` is position ``i``. ``generation`` counts
    the replaces applied so far, so two views of one generation differ only by appends."""

    __slots__ = ("_events", "_length", "_seqs", "generation")

    def __init__(
        self, seqs: list[int], length: int, events: Sequence[SessionEvent], generation: int
    ) -> None:
        self._seqs = seqs
        self._length = length
        # The log indexed by seq; earlier events never change. Its items are log events.
        self._events = cast("Sequence[LogEvent]", events)
        self.generation = generation

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> SurfaceNode: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[SurfaceNode, ...]: ...

    def __getitem__(self, index: int | slice) -> SurfaceNode | tuple[SurfaceNode, ...]:
        if isinstance(index, slice):
            return tuple(self._node(i) for i in range(self._length)[index])
        position = index + self._length if index < 0 else index
        if not 0 <= position < self._length:
            raise IndexError(f"surface position {index} out of range for {self._length}")
        return self._node(position)

    def _node(self, position: int) -> SurfaceNode:
        return SurfaceNode(position, self._events[self._seqs[position]])

    def __iter__(self) -> Iterator[SurfaceNode]:
        return (self._node(i) for i in range(self._length))

    @property
    def seqs(self) -> tuple[int, ...]:
        """The holding seqs, in surface order."""
        return tuple(self._seqs[: self._length])

    def position_of(self, seq: int) -> int | None:
        """The position event ``seq`` holds, or ``None`` if it is not on the surface."""
        try:
            return self._seqs.index(seq, 0, self._length)
        except ValueError:
            return None

    def __repr__(self) -> str:
        return f"SurfaceView(seqs={list(self.seqs)!r}, generation={self.generation})"


__all__ = [
    "SurfaceNode",
    "SurfaceView",
    "message_of",
]
