"""Frozen values share their pydantic bookkeeping (the fields set) without any value
seeing another's: each pydantic path that reads or writes it behaves as before."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from dsh_llm import (
    AssistantMessage,
    MessageAdapter,
    TextBlock,
    UserMessage,
    UserSource,
    create_assistant_message,
    create_user_message,
)
from dsh_llm import _create as create_module
from dsh_llm._fields_sets import SharedFieldsSet


def _text(**fields: Any) -> TextBlock:
    return TextBlock.model_validate(fields)


def test_values_naming_the_same_fields_share_one_fields_set() -> None:
    first, second = _text(type="text", text="a"), _text(type="text", text="b")
    assert first.model_fields_set == {"type", "text"}
    assert type(first.model_fields_set) is SharedFieldsSet
    assert first.model_fields_set is second.model_fields_set
    # A value naming other fields has its own shared set, so exclude_unset is unchanged.
    short = _text(text="c")
    assert short.model_fields_set == {"text"}
    assert short.model_dump(exclude_unset=True) == {"text": "c"}
    assert first.model_dump(exclude_unset=True) == {"type": "text", "text": "a"}


MUTATIONS: list[Callable[[set[str]], object]] = [
    lambda s: s.add("x"),
    lambda s: s.discard("text"),
    lambda s: s.remove("text"),
    lambda s: s.pop(),
    lambda s: s.clear(),
    lambda s: s.update({"x"}),
    lambda s: s.intersection_update(set()),
    lambda s: s.difference_update({"text"}),
    lambda s: s.symmetric_difference_update({"x"}),
    lambda s: s.__ior__({"x"}),
    lambda s: s.__iand__(set()),
    lambda s: s.__isub__({"text"}),
    lambda s: s.__ixor__({"x"}),
    lambda s: s.__init__({"x"}),  # type: ignore[misc]
]


@pytest.mark.parametrize("mutate", MUTATIONS)
def test_a_shared_fields_set_refuses_every_change(mutate: Callable[[set[str]], object]) -> None:
    value, other = _text(type="text", text="a"), _text(type="text", text="b")
    with pytest.raises(TypeError, match="shared"):
        mutate(value.model_fields_set)
    assert other.model_fields_set == {"type", "text"}
    assert other.model_dump(exclude_unset=True) == {"type": "text", "text": "b"}


def test_the_fields_set_cannot_be_replaced_on_a_value() -> None:
    value = _text(type="text", text="a")
    with pytest.raises(TypeError, match="immutable"):
        value.__pydantic_fields_set__ = set()
    with pytest.raises(TypeError, match="update"):
        value.model_copy(update={"text": "b"})
    with pytest.raises(TypeError, match="update"):
        value.__replace__(text="b")  # type: ignore[attr-defined]
    assert value.model_copy() is value
    assert copy.copy(value) is value and copy.deepcopy(value) is value


def test_open_values_with_unknown_fields_keep_their_own_fields_set() -> None:
    """An open model's fields set names its extras too: sharing those would key the
    registry of shared sets on input data."""
    first = UserSource.model_validate({"kind": "user", "rpcId": 1})
    second = UserSource.model_validate({"kind": "user", "rpcId": 2})
    assert first.model_fields_set == {"kind", "rpcId"}
    assert type(first.model_fields_set) is set
    assert first.model_fields_set is not second.model_fields_set
    assert first.model_dump(exclude_unset=True) == {"kind": "user", "rpcId": 1}
    plain = UserSource.model_validate({"kind": "user"})
    assert type(plain.model_fields_set) is SharedFieldsSet
    assert plain.model_fields_set is UserSource.model_validate({"kind": "user"}).model_fields_set


def test_pickling_keeps_the_fields_set_and_shares_it_again() -> None:
    message = create_user_message(content="hi", source={"kind": "user", "rpcId": 7})
    restored = pickle.loads(pickle.dumps(message))
    assert restored == message
    assert restored.model_dump_json() == message.model_dump_json()
    assert restored.model_dump(exclude_unset=True) == message.model_dump(exclude_unset=True)
    assert restored.model_fields_set is message.model_fields_set
    assert restored.content[0].model_fields_set is message.content[0].model_fields_set
    assert restored.source.model_fields_set == {"kind", "rpcId"}
    assert type(restored.source.model_fields_set) is set


def test_revalidating_a_subclass_instance_keeps_its_fields() -> None:
    class Marked(TextBlock):
        pass

    marked = Marked.model_validate({"text": "a"})
    message = UserMessage.model_validate(
        {"id": "m1", "role": "user", "content": (marked,), "source": {"kind": "user"}}
    )
    block = message.content[0]
    assert type(block) is TextBlock and block.model_fields_set == {"text"}
    assert type(block.model_fields_set) is SharedFieldsSet


def test_json_and_python_validation_share_the_same_sets() -> None:
    message = create_assistant_message(content="hi", source={"provider": "p", "model": "m"})
    loaded = MessageAdapter.validate_json(MessageAdapter.dump_json(message))
    assert loaded == message and hash(loaded) == hash(message)
    assert loaded.model_fields_set is message.model_fields_set
    assert loaded.source.model_fields_set is message.source.model_fields_set


def test_prompts_created_from_the_plain_user_source_share_one_source() -> None:
    first = create_user_message(content="a", source={"kind": "user"})
    second = create_user_message(content="b", source={"kind": "user"})
    assert first.source is second.source
    assert first.model_dump(exclude_unset=True)["source"] == {"kind": "user"}
    assert first.model_dump_json() == (
        f'{{"id":"{first.id}","role":"user","content":[{{"type":"text","text":"a"}}],'
        '"source":{"kind":"user"}}'
    )


@pytest.mark.parametrize(
    "source",
    [
        {"kind": "user", "rpcId": 1},
        {"kind": "user", "editOf": "m0"},
        {"kind": "plugin", "plugin": "p"},
        UserSource(),
    ],
    ids=["extras", "edit", "plugin", "model"],
)
def test_other_sources_are_not_replaced_by_the_shared_one(source: Any) -> None:
    plain = create_user_message(content="a", source={"kind": "user"}).source
    message = create_user_message(content="b", source=source)
    assert message.source is not plain
    expected = source.model_dump() if isinstance(source, UserSource) else source
    assert message.source.model_dump(by_alias=True) == expected


def _assistant(**source: Any) -> AssistantMessage:
    return create_assistant_message(content="hi", source=source)


def test_assistant_messages_of_one_model_share_one_source() -> None:
    first, second = (
        _assistant(provider="p", model="shared"),
        _assistant(provider="p", model="shared"),
    )
    assert first.source is second.source
    assert second.model_dump(exclude_unset=True)["source"] == {
        "kind": "model",
        "provider": "p",
        "model": "shared",
    }
    assert _assistant(provider="p", model="other").source is not first.source
    with_state = _assistant(provider="p", model="shared", replay_state={"a": 1})
    assert with_state.source is not first.source and with_state.source.replay_state == {"a": 1}
    assert _assistant(provider="p", model="shared").source.replay_state is None


def test_an_invalid_model_source_is_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ValidationError, match=r"source\.model"):
            _assistant(provider="p", model="")


def test_the_kept_model_sources_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = create_module._MODEL_SOURCES
    monkeypatch.setattr(create_module, "_MAX_MODEL_SOURCES", len(kept))
    first = _assistant(provider="p", model="unkept")
    assert ("p", "unkept") not in kept
    assert _assistant(provider="p", model="unkept").source is not first.source


def test_values_built_on_many_threads_at_once_share_one_set_per_field_names() -> None:
    # The registry is filled without a lock: two threads racing on a new field-name set
    # must still end with one shared set, and every value must dump its own fields.
    from concurrent.futures import ThreadPoolExecutor

    names = [f"thread-field-{n}" for n in range(40)]

    def build(worker: int) -> list[UserMessage]:
        return [
            create_user_message(
                content=f"{worker}-{n}", source={"kind": "user", names[n % len(names)]: n}
            )
            for n in range(400)
        ]

    with ThreadPoolExecutor(max_workers=8) as pool:
        built = [message for batch in pool.map(build, range(8)) for message in batch]

    blocks = {id(message.content[0].__pydantic_fields_set__) for message in built}
    assert len(blocks) == 1
    assert len({message.content[0].model_dump()["text"] for message in built}) == 8 * 400
    for message in built:
        (extra_name,) = message.source.model_dump(by_alias=True).keys() - {"kind"}
        assert extra_name in names
