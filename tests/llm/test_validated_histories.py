"""A request takes a validated history (a ``ValidatedMessages``) as one tuple of the
very message objects, without checking each item again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from dsh_llm import GenerateRequest, Message, create_user_message
from dsh_llm._messages import ValidatedMessages


class _History(ValidatedMessages):
    """A validated history that only knows how to be iterated and indexed."""

    __slots__ = ("_items",)

    def __init__(self, items: Sequence[Message]) -> None:
        self._items = tuple(items)

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        return self._items[index]


def test_any_validated_history_becomes_a_tuple_of_the_same_objects() -> None:
    messages = [create_user_message(content=str(n), source={"kind": "user"}) for n in range(3)]
    history = _History(messages)
    assert history.as_tuple() == tuple(messages)
    request = GenerateRequest(provider="p", model="m", messages=history)
    assert type(request.messages) is tuple
    assert all(a is b for a, b in zip(request.messages, messages, strict=True))
