"""Deep-frozen JSON values: the form arbitrary JSON takes inside a message.

Free-form JSON (``replayState``, extra source fields, tool ``meta``) is stored
deep-frozen so that nobody holding a message can change what its id names: objects
become :class:`FrozenDict`, arrays become tuples, and only lossless JSON is accepted
(string keys, finite numbers, no cycles, no other objects) and only what every store
can write and read back equal (see :func:`freeze_json`). Dumping gives plain JSON.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Self, TypeAlias

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from dsh_llm._json_limits import JSON_INT_MAX, JSON_INT_MIN, MAX_JSON_DEPTH
from dsh_llm.errors import JsonValueError

JsonScalar: TypeAlias = bool | int | float | str | None

_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone UTF-16 surrogate in ``text`` (such text cannot be
    written as UTF-8 JSON), or ``None``. Pure ASCII is answered without a scan."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


class FrozenDict(dict[str, Any]):
    """A read-only, hashable JSON object. Build one with :func:`freeze_json`.

    It is a ``dict`` subclass so that serializers and ``==`` treat it as a plain
    JSON object, but every mutating method raises ``TypeError``, including a second
    ``__init__`` call that would refill it.
    """

    __slots__ = ("_hash",)
    _hash: int

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        frozen = dict.__new__(cls)
        dict.__init__(frozen, *args, **kwargs)
        return frozen

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # ``__new__`` filled it; a later ``d.__init__(other)`` must not refill it.
        if (args or kwargs) and dict(*args, **kwargs) != self:
            self._refuse()

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("FrozenDict is immutable: JSON inside a dsh message cannot change")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse
    __ior__ = __setattr__ = __delattr__ = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            value = hash(frozenset(self.items()))
            object.__setattr__(self, "_hash", value)
            return value

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_frozen_dict_from_items, (tuple(self.items()),))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


def _frozen_dict_from_items(items: tuple[tuple[str, Any], ...]) -> FrozenDict:
    return FrozenDict(items)


def frozen_copy(items: Mapping[str, Any]) -> FrozenDict:
    """A :class:`FrozenDict` of already-frozen ``items``, built without the
    constructor's argument handling (for hot paths)."""
    frozen = dict.__new__(FrozenDict)
    dict.update(frozen, items)
    return frozen


FrozenJsonValue: TypeAlias = JsonScalar | tuple["FrozenJsonValue", ...] | FrozenDict


class _Refused(Exception):
    """Raised inside the walk; each enclosing level adds its key on the way out, so
    no path string is built for values that are fine."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.parts: list[str] = []


def freeze_json(value: object) -> FrozenJsonValue:
    """Return a deep-frozen, detached copy of a JSON value, or raise
    :class:`JsonValueError` naming the first offending path.

    Accepted values are exactly those every store writes and reads back equal:
    strings without lone surrogates, integers in ``JSON_INT_MIN..JSON_INT_MAX``,
    finite floats, string keys, at most :data:`MAX_JSON_DEPTH` levels. Subclasses of
    ``str``/``int``/``float`` become the plain builtin, so no custom ``__eq__``
    survives inside a message."""
    try:
        return _freeze(value, 1)
    except _Refused as refused:
        path = "$" + "".join(reversed(refused.parts))
        raise JsonValueError(f"{path}: {refused.reason}") from None


def _freeze(value: object, depth: int) -> FrozenJsonValue:
    kind = type(value)
    if kind is str:
        text: str = value  # type: ignore[assignment]
        if not text.isascii() and _SURROGATE.search(text):
            _check_text(text)
        return text
    if value is None or kind is bool:
        return value  # type: ignore[return-value]
    if kind is int:
        if not JSON_INT_MIN <= value <= JSON_INT_MAX:  # type: ignore[operator]
            raise _Refused(
                f"an integer of {value.bit_length()} bits is outside the 64-bit range "  # type: ignore[attr-defined]
                "that JSON keeps exactly"
            )
        return value  # type: ignore[return-value]
    if kind is float:
        if not math.isfinite(value):  # type: ignore[arg-type]
            raise _Refused(f"{value!r} is not a finite JSON number")
        return value  # type: ignore[return-value]
    if isinstance(value, (Mapping, list, tuple)):
        if depth > MAX_JSON_DEPTH:
            raise _Refused(
                f"JSON nests deeper than MAX_JSON_DEPTH={MAX_JSON_DEPTH} levels "
                "(or contains a cycle)"
            )
        if isinstance(value, Mapping):
            return _freeze_object(value, depth)
        return _freeze_array(value, depth)
    if isinstance(value, (str, int, float)):
        return _freeze(_as_builtin(value), depth)
    raise _Refused(f"{kind.__name__} is not a JSON value")


def _freeze_object(value: Mapping[Any, Any], depth: int) -> FrozenDict:
    frozen = dict.__new__(FrozenDict)
    for key, item in value.items():
        if type(key) is not str:
            if not isinstance(key, str):
                raise _Refused(f"object key {key!r} is not a string")
            key = str.__str__(key)
        if _lone_surrogate_at(key) is not None:
            raise _Refused(f"object key {key!r} has a lone surrogate, which JSON cannot hold")
        try:
            dict.__setitem__(frozen, key, _freeze(item, depth + 1))
        except _Refused as refused:
            refused.parts.append(f".{key}")
            raise
    return frozen


def _freeze_array(value: list[Any] | tuple[Any, ...], depth: int) -> tuple[FrozenJsonValue, ...]:
    items: list[FrozenJsonValue] = []
    try:
        for item in value:
            items.append(_freeze(item, depth + 1))
    except _Refused as refused:
        refused.parts.append(f"[{len(items)}]")
        raise
    return tuple(items)


def _check_text(text: str) -> None:
    at = _lone_surrogate_at(text)
    if at is not None:
        raise _Refused(
            f"text has a lone surrogate {text[at]!r} at index {at}, which UTF-8 JSON cannot hold"
        )


def _as_builtin(value: str | int | float) -> JsonScalar:
    """The plain builtin value of a ``str``/``int``/``float`` subclass instance, taken
    with the builtin's own method so an override cannot change it."""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    return float.__float__(value)


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

__all__ = [
    "FrozenDict",
    "FrozenJson",
    "FrozenJsonValue",
    "JsonScalar",
    "freeze_json",
    "frozen_copy",
    "thaw_json",
]
