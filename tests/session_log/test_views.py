"""The immutable views over append-only lists answer slices exactly as a tuple of the
same prefix would, whatever the list has grown to since the view was taken."""

from __future__ import annotations

import itertools

import pytest

from dsh_llm import GenerateRequest, Message, create_user_message
from dsh_session._views import MessageView, PrefixView

BOUNDS = (None, -25, -3, -1, 0, 1, 5, 19, 20, 25)
STEPS = (None, 1, 2, -1, -2)


@pytest.mark.parametrize("length", [0, 1, 7, 19, 20])
def test_slices_match_a_tuple_of_the_prefix(length: int) -> None:
    items = list(range(20))
    view = PrefixView(items, length)
    items.extend(range(100, 110))  # grown after the view was taken: never visible
    prefix = tuple(range(length))
    for start, stop, step in itertools.product(BOUNDS, BOUNDS, STEPS):
        assert view[start:stop:step] == prefix[start:stop:step], (start, stop, step)


def test_a_slice_is_a_copy_not_a_window() -> None:
    items = [1, 2, 3]
    view = PrefixView(items, 3)
    tail = view[1:]
    items.append(4)
    assert tail == (2, 3)
    assert type(tail) is tuple


def test_a_message_view_copies_exactly_its_prefix_into_a_request() -> None:
    messages: list[Message] = [
        create_user_message(content=str(n), source={"kind": "user"}) for n in range(5)
    ]
    whole = MessageView(messages, 5)
    prefix = MessageView(messages, 3)
    assert whole.as_tuple() == tuple(messages)
    messages.append(create_user_message(content="later", source={"kind": "user"}))
    for view, count in ((whole, 5), (prefix, 3)):
        request = GenerateRequest(provider="p", model="m", messages=view)
        assert request.messages == tuple(messages[:count])
        assert all(a is b for a, b in zip(request.messages, messages, strict=False))
