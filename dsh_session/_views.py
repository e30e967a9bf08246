"""Immutable sequence views over append-only lists.

``session.events`` and ``derive_messages()`` must be O(1) to obtain and must never
change once returned, even as the session grows. Copying the list on every call would
cost O(n); instead a view remembers the list and its length at the moment it was taken.
The owner only ever appends to such a list (a surface replace builds a *new* list), so
the first ``length`` items a view exposes stay exactly as they were.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import TypeVar, overload

from dsh_llm._messages import Message, ValidatedMessages

T = TypeVar("T", covariant=True)


class PrefixView(Sequence[T]):
    """A read-only window on the first ``length`` items of an append-only list.
    Compares equal to a tuple, list or view with equal items."""

    __slots__ = ("_items", "_length")

    def __init__(self, items: list[T], length: int) -> None:
        self._items = items
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._length)
            if step == 1:  # a plain slice: one C copy (a store's pending tail, a guard's)
                return tuple(self._items[start:stop])
            items = self._items
            return tuple(items[i] for i in range(start, stop, step))
        position = index + self._length if index < 0 else index
        if not 0 <= position < self._length:
            raise IndexError(f"index {index} out of range for {self._length} items")
        return self._items[position]

    def __iter__(self) -> Iterator[T]:
        return islice(self._items, self._length)

    def __reversed__(self) -> Iterator[T]:
        items = self._items
        return (items[i] for i in range(self._length - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (PrefixView, tuple, list)):
            return NotImplemented
        return len(other) == self._length and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class MessageView(PrefixView[Message], ValidatedMessages):
    """A :class:`PrefixView` of derived history. Its items are messages the session
    validated on append, so a ``GenerateRequest`` built from it skips the per-item check."""

    __slots__ = ()

    def as_tuple(self) -> tuple[Message, ...]:
        # Every request copies the whole history: one C copy of the list, usually
        # whole (nothing appended since), is 2-3x as fast as iterating the view.
        items = self._items
        return tuple(items) if len(items) == self._length else tuple(items[: self._length])


__all__ = [
    "MessageView",
    "PrefixView",
]
