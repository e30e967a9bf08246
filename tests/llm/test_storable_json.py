"""Values are refused at creation when a store could not write them or read them back
equal, and frozen values stay frozen on every path (issue 8, items 1 and 6)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from dsh_llm import (
    JSON_INT_MAX,
    JSON_INT_MIN,
    MAX_JSON_DEPTH,
    FrozenDict,
    ImageBlock,
    MessageAdapter,
    TokenUsage,
    create_assistant_message,
    create_user_message,
    freeze_json,
    freeze_message,
)
from dsh_llm._sources import PluginForm, PluginSource, UnknownSource, UserSource
from dsh_llm.errors import JsonValueError
from dsh_session import RequestConfig, TurnStartData
from dsh_session._header import SessionHeader, parse_header

LONE = "a\udcff"
MODEL = {"provider": "p", "model": "m"}


def nested_list(depth: int) -> Any:
    """A JSON array nesting ``depth`` levels (``[]`` is one level)."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def nested_tool_results(levels: int) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": "x"}
    for _ in range(levels):
        block = {"type": "tool-result", "call_id": "c1", "content": [block]}
    return block


# --- lone surrogates --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: create_user_message(content=LONE, source={"kind": "user"}), "text"),
        (
            lambda: create_user_message(content="x", source={"kind": "plugin", "plugin": LONE}),
            "plugin",
        ),
        (
            lambda: create_assistant_message(
                content=[{"type": "tool-call", "id": "c1", "name": "f", "arguments": LONE}],
                source=MODEL,
            ),
            "arguments",
        ),
        (
            lambda: create_assistant_message(content="x", source={"provider": LONE, "model": "m"}),
            "provider",
        ),
        (lambda: create_user_message(content="x", source={"kind": "user", "rpcId": LONE}), "rpcId"),
        (lambda: create_user_message(content="x", source={"kind": "user", LONE: 1}), "source"),
        (
            lambda: create_assistant_message(
                content="x", source={**MODEL, "replayState": {"k": [LONE]}}
            ),
            "replayState",
        ),
        (
            lambda: create_assistant_message(
                content="x", source={**MODEL, "replayState": {LONE: 1}}
            ),
            "replayState",
        ),
        (
            lambda: create_user_message(
                content="x",
                source={"kind": "plugin", "plugin": "p", "form": {"kind": "relay", "note": LONE}},
            ),
            "note",
        ),
        (
            lambda: freeze_message(
                {"id": "m1", "role": "user", "content": [], "source": {"kind": LONE}}
            ),
            "kind",
        ),
    ],
)
def test_a_lone_surrogate_anywhere_is_refused_naming_the_field(
    build: Callable[[], object], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        build()
    text = str(caught.value)
    assert field in text
    assert "unicode" in text or "surrogate" in text


def test_a_surrogate_pair_is_fine_and_only_a_lone_one_is_refused() -> None:
    message = create_user_message(
        content="\U0001f600 ok", source={"kind": "user", "e": "é\U0001f600"}
    )
    assert MessageAdapter.validate_json(MessageAdapter.dump_json(message)) == message
    with pytest.raises(JsonValueError, match=r"\$\.k\[1\]: text has a lone surrogate"):
        freeze_json({"k": ["fine", "\ud83d"]})


def test_header_fields_refuse_lone_surrogates() -> None:
    with pytest.raises(ValidationError, match="cwd"):
        SessionHeader(id="s1", created_at=0, cwd=LONE)
    with pytest.raises(ValidationError, match="origin"):
        SessionHeader.model_validate({"id": "s1", "createdAt": 0, "origin": [LONE]})


# --- nesting ----------------------------------------------------------------------------


def test_json_at_the_depth_limit_is_kept_and_one_level_deeper_is_refused() -> None:
    at_limit = create_assistant_message(
        content="x", source={**MODEL, "replayState": nested_list(MAX_JSON_DEPTH)}
    )
    assert MessageAdapter.validate_json(MessageAdapter.dump_json(at_limit)) == at_limit

    with pytest.raises(ValidationError, match="MAX_JSON_DEPTH"):
        create_assistant_message(
            content="x", source={**MODEL, "replayState": nested_list(MAX_JSON_DEPTH + 1)}
        )


def test_very_deep_python_json_is_a_validation_error_not_a_recursion_error() -> None:
    with pytest.raises(ValidationError, match="MAX_JSON_DEPTH"):
        create_user_message(content="x", source={"kind": "user", "deep": nested_list(100_000)})


def test_a_cycle_is_refused() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(JsonValueError, match="cycle"):
        freeze_json({"a": cycle})


def test_content_at_the_depth_limit_is_kept_and_one_level_deeper_is_refused() -> None:
    levels = (MAX_JSON_DEPTH - 2) // 2  # content array and innermost block take two
    message = create_user_message(content=[nested_tool_results(levels)], source={"kind": "user"})
    assert MessageAdapter.validate_json(MessageAdapter.dump_json(message)) == message

    with pytest.raises(ValidationError, match="MAX_JSON_DEPTH"):
        create_user_message(content=[nested_tool_results(levels + 1)], source={"kind": "user"})


def test_very_deep_content_is_a_validation_error_not_a_recursion_error() -> None:
    with pytest.raises(ValidationError):
        create_user_message(content=[nested_tool_results(100_000)], source={"kind": "user"})


# --- numbers ----------------------------------------------------------------------------


@pytest.mark.parametrize("number", [JSON_INT_MIN, -1, 0, 2**63, JSON_INT_MAX])
def test_integers_in_the_64_bit_ranges_round_trip(number: int) -> None:
    message = create_user_message(content="x", source={"kind": "user", "n": number})
    restored = MessageAdapter.validate_json(MessageAdapter.dump_json(message))
    assert restored == message
    assert type(restored.source.model_extra["n"]) is int  # type: ignore[index]


@pytest.mark.parametrize(
    "number", [JSON_INT_MIN - 1, JSON_INT_MAX + 1, 10**5000], ids=["below", "above", "huge"]
)
def test_integers_beyond_64_bits_are_refused(number: int) -> None:
    with pytest.raises(ValidationError, match="64-bit"):
        create_user_message(content="x", source={"kind": "user", "n": number})


@pytest.mark.parametrize(
    "build",
    [
        lambda n: ImageBlock(media_type="image/png", url="u", width=n),
        lambda n: RequestConfig(provider="p", model="m", max_tokens=n),
        lambda n: SessionHeader(id="s1", created_at=n),
        lambda n: TurnStartData(turn=n),
        lambda n: TokenUsage(input_tokens=n, output_tokens=0),
    ],
    ids=["image-width", "max-tokens", "created-at", "turn", "usage"],
)
def test_typed_integers_beyond_64_bits_are_refused(build: Callable[[int], object]) -> None:
    build(JSON_INT_MAX)
    with pytest.raises(ValidationError, match="less than or equal"):
        build(JSON_INT_MAX + 1)
    with pytest.raises(ValidationError, match="less than or equal"):
        build(10**5000)


@pytest.mark.parametrize("number", [float("inf"), float("nan")])
def test_a_non_finite_float_in_a_typed_field_is_refused(number: float) -> None:
    with pytest.raises(ValidationError, match="temperature"):
        RequestConfig(provider="p", model="m", temperature=number)


# --- builtin types only -----------------------------------------------------------------


class _Sticky(str):
    """A str whose == is always true: it must not survive inside a message."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class _Answer(enum.IntEnum):
    YES = 1


class _Float(float):
    pass


def test_subclasses_become_the_exact_builtin() -> None:
    frozen = freeze_json({_Sticky("key"): [_Sticky("v"), _Answer.YES, _Float(1.5)]})
    assert isinstance(frozen, FrozenDict)
    (key,) = frozen
    items = frozen["key"]
    assert [type(key), *map(type, items)] == [str, str, int, float]
    assert items == ("v", 1, 1.5)
    assert items[0] != "other"


# --- frozen extras ----------------------------------------------------------------------


def _open_models() -> list[Any]:
    return [
        UserSource.model_validate({"rpcId": 1}),
        PluginSource.model_validate({"plugin": "p", "compactionId": "c"}),
        PluginForm.model_validate({"kind": "relay", "note": "n"}),
        UnknownSource.model_validate({"kind": "other", "x": 1}),
        RequestConfig.model_validate({"provider": "p", "model": "m", "seed": 3}),
        parse_header({"version": 0, "id": "s1", "createdAt": 0, "origin": "ts"}),
    ]


@pytest.mark.parametrize("model", _open_models(), ids=lambda model: type(model).__name__)
def test_extra_fields_cannot_be_changed_behind_the_value(model: Any) -> None:
    before = model.model_dump_json()
    extra = model.__pydantic_extra__
    assert type(extra) is FrozenDict
    assert model.model_extra is extra
    mutations: list[Callable[[], object]] = [
        lambda: extra.__setitem__("injected", 1),
        lambda: extra.update(injected=1),
        lambda: extra.clear(),
        lambda: extra.__init__({"injected": 1}),
        lambda: setattr(model, "__pydantic_extra__", {"injected": 1}),
        lambda: delattr(model, "__pydantic_extra__"),
    ]
    for mutate in mutations:
        with pytest.raises(TypeError, match="immutable"):
            mutate()
    assert model.model_dump_json() == before


def test_a_model_without_extras_still_has_a_frozen_empty_mapping() -> None:
    source = create_user_message(content="x", source={"kind": "user"}).source
    assert source.model_extra == {}
    with pytest.raises(TypeError):
        source.__pydantic_extra__["rpcId"] = 1


def test_frozen_dict_cannot_be_refilled_by_init() -> None:
    frozen = FrozenDict({"a": 1})
    with pytest.raises(TypeError, match="immutable"):
        frozen.__init__({"b": 2})  # type: ignore[misc]
    with pytest.raises(TypeError, match="immutable"):
        FrozenDict().__init__(b=2)  # type: ignore[misc]
    with pytest.raises(TypeError, match="immutable"):
        frozen._hash = 0
    frozen.__init__({"a": 1})  # type: ignore[misc]  # changes nothing, so allowed
    assert frozen == {"a": 1}
