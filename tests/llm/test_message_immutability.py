"""A message is deep-immutable: no public path changes it or yields a mutable twin."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from dsh_llm import (
    AssistantMessage,
    FrozenDict,
    UserMessage,
    create_assistant_message,
    create_user_message,
    freeze_json,
)


@pytest.fixture
def message() -> AssistantMessage:
    return create_assistant_message(
        content=[
            {"type": "text", "text": "hi"},
            {"type": "tool-call", "id": "c1", "name": "f", "arguments": "{}"},
        ],
        source={"provider": "p", "model": "m", "replayState": {"list": [1, {"x": 2}]}},
    )


def test_assigning_an_attribute_raises(message: AssistantMessage) -> None:
    with pytest.raises(ValidationError, match="frozen"):
        message.id = "other"  # type: ignore[misc,assignment]
    with pytest.raises(ValidationError, match="frozen"):
        message.source.model = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        message.content[0].text = "other"  # type: ignore[misc,union-attr]


def test_content_is_a_tuple(message: AssistantMessage) -> None:
    assert type(message.content) is tuple
    with pytest.raises(TypeError):
        message.content[0] = message.content[1]  # type: ignore[index]


def test_nested_json_is_read_only(message: AssistantMessage) -> None:
    state = message.source.replay_state
    assert isinstance(state, FrozenDict)
    nested = state["list"]
    assert type(nested) is tuple
    inner = nested[1]
    assert isinstance(inner, FrozenDict)

    mutations: list[Callable[[], object]] = [
        lambda: state.__setitem__("new", 1),
        lambda: state.__delitem__("list"),
        lambda: state.update(a=1),
        lambda: state.pop("list"),
        lambda: state.popitem(),
        lambda: state.setdefault("k", 1),
        lambda: state.clear(),
        lambda: inner.__setitem__("x", 3),
    ]
    for mutate in mutations:
        with pytest.raises(TypeError, match="immutable"):
            mutate()
    with pytest.raises(TypeError, match="immutable"):
        state |= {"a": 1}
    assert message.source.replay_state == {"list": (1, {"x": 2})}


def test_extra_source_fields_are_read_only() -> None:
    message = create_user_message(content="x", source={"kind": "user", "rpcId": {"n": 1}})
    extra = message.source.model_extra
    assert extra is not None

    with pytest.raises(TypeError):
        extra["rpcId"] = 2
    with pytest.raises(TypeError):
        extra["rpcId"]["n"] = 2
    assert message.source.model_extra == {"rpcId": {"n": 1}}


def test_model_copy_with_update_is_refused(message: AssistantMessage) -> None:
    with pytest.raises(TypeError, match="immutable"):
        message.model_copy(update={"id": "stolen"})
    assert message.id != "stolen"


@pytest.mark.parametrize(
    "duplicate",
    [
        lambda m: m.model_copy(),
        lambda m: m.model_copy(deep=True),
        copy.copy,
        copy.deepcopy,
    ],
)
def test_copies_are_the_same_object(message: AssistantMessage, duplicate: Any) -> None:
    assert duplicate(message) is message


def test_model_construct_validates(message: AssistantMessage) -> None:
    unchecked: dict[str, Any] = {"id": "x", "role": "user", "content": [{"type": "bogus"}]}
    with pytest.raises(ValidationError):
        UserMessage.model_construct(**unchecked)

    loose: dict[str, Any] = {**dict(message), "content": list(message.content)}
    rebuilt = AssistantMessage.model_construct(**loose)
    assert rebuilt == message
    assert type(rebuilt.content) is tuple


def test_model_validate_of_a_message_returns_it(message: AssistantMessage) -> None:
    assert AssistantMessage.model_validate(message) is message


def test_frozen_json_copies_are_the_same_object() -> None:
    frozen = freeze_json({"a": [1]})

    assert copy.copy(frozen) is frozen
    assert copy.deepcopy(frozen) is frozen


def test_pickle_round_trip_keeps_value_and_immutability(message: AssistantMessage) -> None:
    restored = pickle.loads(pickle.dumps(message))

    assert restored == message
    assert restored.id == message.id
    with pytest.raises(TypeError):
        restored.source.replay_state["list"] = ()
