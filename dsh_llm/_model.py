"""The frozen Pydantic base shared by every dsh wire type.

It fixes the wire conventions once (camelCase aliases on the wire, snake_case in
Python, both accepted on input, unset optionals omitted) and closes the public
Pydantic paths that could yield a mutable or silently re-identified value:
``model_copy`` with updates and ``model_construct`` (which skips validation).
It also refuses at validation what could not be stored: text with lone surrogates and
non-finite floats, in every field of every dsh model.
"""

from __future__ import annotations

import operator
import sys
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn, Self, cast

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler
from pydantic.alias_generators import to_camel
from pydantic_core import core_schema

from dsh_llm._fields_sets import shared_fields_set

_is_none = partial(operator.is_, None)
"""``value is None`` as a C callable: pydantic-core calls it for every optional field
of every value it dumps, and a Python function there cost about twice as much."""


def optional(**constraints: Any) -> Any:
    """Field spec for an optional wire field: ``None`` means absent and is not dumped."""
    return Field(default=None, exclude_if=_is_none, **constraints)


class SerializedByMemberType:
    """Annotation for a union of dsh models: dump each value with its own model's
    serializer. Pydantic's union serializer type-checks the members in turn, which
    made it the costliest part of dumping a history; validation is unchanged."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        schema = dict(handler(source), serialization=core_schema.simple_ser_schema("any"))
        return cast(core_schema.CoreSchema, schema)


class DshModel(BaseModel):
    """Frozen base model: deep-immutable once validated, camelCase on the wire."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        serialize_by_alias=True,
        revalidate_instances="subclass-instances",
        cache_strings="keys",
        # Any length bound makes pydantic-core read each string as UTF-8, which refuses
        # lone surrogates (``string_unicode``, naming the field) in Rust at no extra pass;
        # this bound is never reached.
        str_max_length=sys.maxsize,
        # inf/nan would be dumped as null and read back as something else.
        allow_inf_nan=False,
    )

    if not TYPE_CHECKING:  # hidden from mypy, which would then allow any assignment
        __pydantic_fields_set__ = shared_fields_set

        def __setattr__(self, name: str, value: Any) -> None:
            if name.startswith("_"):
                self._refuse_internal(name)
            super().__setattr__(name, value)

        def __delattr__(self, name: str) -> None:
            if name.startswith("_"):
                self._refuse_internal(name)
            super().__delattr__(name)

    def _refuse_internal(self, name: str) -> NoReturn:
        """Pydantic lets underscore names (``__pydantic_extra__``...) be set on a frozen
        model; that would change a value behind its id."""
        raise TypeError(f"{type(self).__name__} is immutable; {name!r} cannot be changed")

    def model_copy(self, *, update: Any = None, deep: bool = False) -> Self:
        """Return ``self``: a frozen value needs no copy. Updates are refused
        because they would skip validation (use ``replace_content`` or
        ``freeze_message`` on a new mapping instead)."""
        if update:
            raise TypeError(
                f"{type(self).__name__} is immutable; model_copy(update=...) is not "
                "supported (use replace_content() or validate a new value)"
            )
        return self

    @classmethod
    def model_construct(  # type: ignore[override]
        cls, _fields_set: set[str] | None = None, **values: Any
    ) -> Self:
        """Validate instead of constructing blindly: no unvalidated dsh value exists."""
        return cls.model_validate(values)

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        return self


__all__ = [
    "DshModel",
    "SerializedByMemberType",
    "optional",
]
