"""One shared, read-only ``__pydantic_fields_set__`` per distinct set of field names.

Pydantic gives every model instance its own ``set`` of the fields the input named: 216
bytes and one more container for the cyclic collector to walk, per value, although a
frozen dsh value never changes it and nearly all values of a type name the same fields.
Frozen dsh models share one :class:`SharedFieldsSet` per distinct set instead
(docs/decisions/2026-12-03-shared-model-state.md).
"""

from __future__ import annotations

from typing import Any, NoReturn

from pydantic import BaseModel


class SharedFieldsSet(set[str]):
    """A ``set`` (pydantic's serializer reads the fields set as one, and refuses a
    ``frozenset``) that refuses every change: many values hold the same one."""

    __slots__ = ()

    def __init__(self, *args: Any) -> None:
        # Filled once by ``_shared``; a later ``s.__init__(other)`` must not refill it.
        if args:
            self._refuse()

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a dsh value's fields set is shared by many values and cannot change")

    add = discard = remove = pop = clear = update = _refuse
    intersection_update = difference_update = symmetric_difference_update = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse

    def __reduce__(self) -> tuple[type[set[str]], tuple[list[str]]]:
        """Pickle as a plain set (unpickling shares it again)."""
        return (set, (list(self),))


_SHARED: dict[frozenset[str], SharedFieldsSet] = {}
_lookup_shared = _SHARED.get
_slot = BaseModel.__dict__["__pydantic_fields_set__"]
_read_slot = _slot.__get__
_write_slot = _slot.__set__


def _shared(names: frozenset[str]) -> SharedFieldsSet:
    shared = SharedFieldsSet()
    set.update(shared, names)
    return _SHARED.setdefault(names, shared)


def _store_shared(model: BaseModel, fields_set: set[str]) -> None:
    names = frozenset(fields_set)
    _write_slot(model, _lookup_shared(names) or _shared(names))


def _store_shared_unless_extras(model: BaseModel, fields_set: set[str]) -> None:
    # An open model's fields set also names its unknown fields: sharing those sets
    # would key the registry on input data, so a value with extras keeps its own.
    if model.__pydantic_extra__:
        _write_slot(model, fields_set)
    else:
        _store_shared(model, fields_set)


shared_fields_set: Any = property(_read_slot, _store_shared)
"""The ``__pydantic_fields_set__`` of a frozen dsh model: pydantic-core stores each new
value's set through it, and it keeps the shared one for those names. A C-level read and
one small Python write per value (about 0.25 µs), where a ``model_post_init`` hook cost
more than twice as much."""

shared_fields_set_unless_extras: Any = property(_read_slot, _store_shared_unless_extras)
"""The same for a model that keeps unknown fields."""

__all__ = [
    "SharedFieldsSet",
    "shared_fields_set",
    "shared_fields_set_unless_extras",
]
