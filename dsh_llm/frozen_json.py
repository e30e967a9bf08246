"""Deep-frozen JSON values: the form arbitrary JSON takes inside a message.

Free-form JSON (``replayState``, extra source fields, tool ``meta``) is stored
deep-frozen so that nobody holding a message can change what its id names: objects
become :class:`FrozenDict`, arrays become tuples, and only lossless JSON is accepted
(string keys, finite numbers, no cycles, no other objects). Dumping gives plain JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeAlias

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

JsonScalar: TypeAlias = bool | int | float | str | None


class FrozenDict(dict[str, Any]):
    """A read-only, hashable JSON object. Build one with :func:`freeze_json`.

    It is a ``dict`` subclass so that serializers and ``==`` treat it as a plain
    JSON object, but every mutating method raises ``TypeError``.
    """

    __slots__ = ("_hash",)

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("FrozenDict is immutable: JSON inside a dsh message cannot change")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            self._hash: int = hash(frozenset(self.items()))
            return self._hash

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_frozen_dict_from_items, (tuple(self.items()),))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


def _frozen_dict_from_items(items: tuple[tuple[str, Any], ...]) -> FrozenDict:
    frozen = FrozenDict()
    for key, value in items:
        dict.__setitem__(frozen, key, value)
    return frozen


FrozenJsonValue: TypeAlias = JsonScalar | tuple["FrozenJsonValue", ...] | FrozenDict


class JsonValueError(ValueError):
    """A value that is not lossless JSON; the message names the path to it."""


def freeze_json(value: object) -> FrozenJsonValue:
    """Return a deep-frozen, detached copy of a JSON value, or raise
    :class:`JsonValueError` naming the first offending path."""
    return _freeze(value, "$", set())


def _freeze(value: object, path: str, active: set[int]) -> FrozenJsonValue:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise JsonValueError(f"{path}: {value!r} is not a finite JSON number")
        return float(value)
    if isinstance(value, Mapping):
        marker = id(value)
        if marker in active:
            raise JsonValueError(f"{path}: the value contains a cycle")
        active.add(marker)
        frozen = FrozenDict()
        for key, item in value.items():
            if not isinstance(key, str):
                raise JsonValueError(f"{path}: object key {key!r} is not a string")
            dict.__setitem__(frozen, key, _freeze(item, f"{path}.{key}", active))
        active.discard(marker)
        return frozen
    if isinstance(value, (list, tuple)):
        marker = id(value)
        if marker in active:
            raise JsonValueError(f"{path}: the value contains a cycle")
        active.add(marker)
        items = tuple(_freeze(item, f"{path}[{i}]", active) for i, item in enumerate(value))
        active.discard(marker)
        return items
    raise JsonValueError(f"{path}: {type(value).__name__} is not a JSON value")


def thaw_json(value: object) -> Any:
    """Turn a frozen JSON value back into plain ``dict``/``list`` JSON."""
    if isinstance(value, dict):
        return {key: thaw_json(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw_json(item) for item in value]
    return value


class _FrozenJsonAnnotation:
    """Pydantic glue: validate with :func:`freeze_json`, dump with :func:`thaw_json`."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            freeze_json,
            serialization=core_schema.plain_serializer_function_ser_schema(thaw_json),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"description": "Any JSON value."}


if TYPE_CHECKING:
    FrozenJson: TypeAlias = FrozenJsonValue
else:
    # Pydantic sees only the validator/serializer pair, not the recursive alias.
    FrozenJson = Annotated[Any, _FrozenJsonAnnotation]
"""Field type for arbitrary JSON stored deep-frozen."""
