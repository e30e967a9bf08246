"""Which kinds of event can hold a floating-point number, decided once per kind.

A harness-form batch writes an event as its dumped bytes unless those may hold a float
(``_wire_records.py``), and finding out by screening the bytes cost about a tenth of a
10-event flush. Most events cannot hold one at all: a ``step/start`` is integers and
strings whatever its values. That is a property of the event's models, so it is read
off their serialization JSON schema the first time a kind is met, and an event of a
float-free kind is never screened. A kind is the event's class, and for an
``assistant/chunk`` the chunk's class too (a finish chunk carries free JSON, a text
delta does not).

The reading is conservative: a number, a value of any JSON (free-form fields, extra
fields kept by a model), a serializer of a model's own (its output is not what the
schema says), a schema this reading does not know, or one pydantic cannot produce, all
count as "may hold a float", so that kind keeps the screen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_session._events.classes import AssistantChunkEvent
from dsh_session.events import SessionEvent

Kind = type
"""An event's class, or for an ``assistant/chunk`` its chunk's class."""

_DECIDED: dict[Kind, bool] = {}
"""Kind -> whether its events' JSON holds no float, whatever their values."""
_FREE: set[Kind] = set()
"""The kinds decided float-free."""

_CHUNK_FIELD = ("AssistantChunkData", "chunk")
"""The chunk union inside a chunk event's schema, read as the chunk's own class."""

_COMBINATORS = ("anyOf", "oneOf", "allOf")


def may_hold_floats(events: Sequence[SessionEvent]) -> list[int]:
    """The positions of the events whose kind may hold a float (each kind decided the
    first time it is met; then this is one pass over the events' classes)."""
    kinds = [type(e.data.chunk) if type(e) is AssistantChunkEvent else type(e) for e in events]
    if not _DECIDED.keys() >= set(kinds):
        for event, kind in zip(events, kinds, strict=True):
            if kind not in _DECIDED:
                _DECIDED[kind] = free = _decide(type(event), kind)
                if free:
                    _FREE.add(kind)
    free_kinds = _FREE
    return [position for position, kind in enumerate(kinds) if kind not in free_kinds]


def _decide(cls: type[SessionEvent], kind: Kind) -> bool:
    if kind is cls:
        return model_float_free(cls)
    # A chunk event: its envelope and data without the chunk union, then the chunk.
    return model_float_free(cls, skip=_CHUNK_FIELD) and model_float_free(kind)


def model_float_free(cls: type, *, skip: tuple[str, str] | None = None) -> bool:
    """Whether no instance of the pydantic model ``cls`` dumps a float: its
    serialization schema admits none, and nothing in it is dumped by a serializer of
    its own (whose output that schema does not describe). ``skip`` names one field of
    one model (by class name) to leave out."""
    core = getattr(cls, "__pydantic_core_schema__", None)
    if core is None or _custom_serializer(core, skip, model=None):
        return False
    return schema_float_free(_schema(cls), skip=skip)


def _custom_serializer(node: Any, skip: tuple[str, str] | None, model: str | None) -> bool:
    """Whether a pydantic-core schema dumps something with a serializer other than the
    one its type implies (``any``: by the value's own class, which validation chose)."""
    if isinstance(node, Mapping):
        serialization = node.get("serialization")
        if isinstance(serialization, Mapping) and serialization.get("type") != "any":
            return True
        if node.get("type") == "model":
            model = getattr(node.get("cls"), "__name__", None)
        for key, value in node.items():
            if key == "fields" and skip is not None and model == skip[0]:
                value = {name: field for name, field in value.items() if name != skip[1]}
            if _custom_serializer(value, skip, model):
                return True
        return False
    if isinstance(node, list | tuple):
        return any(_custom_serializer(item, skip, model) for item in node)
    return False


def _schema(cls: type) -> dict[str, Any] | None:
    try:
        schema: dict[str, Any] = cls.model_json_schema(mode="serialization")  # type: ignore[attr-defined]
    except Exception:
        return None
    return schema


def schema_float_free(
    schema: Mapping[str, Any] | None, *, skip: tuple[str, str] | None = None
) -> bool:
    """Whether no value valid for a serialization JSON ``schema`` (as pydantic writes
    them, ``$defs`` at the top) can hold a float; ``skip`` names one property of one
    definition (by title) to leave out."""
    if schema is None:
        return False
    return not _may_hold_float(schema, schema.get("$defs", {}), skip, set())


def _may_hold_float(
    node: Any, defs: Mapping[str, Any], skip: tuple[str, str] | None, seen: set[str]
) -> bool:
    if not isinstance(node, Mapping):
        return node is not False  # ``true`` (or anything unknown) admits any value
    if "$ref" in node:
        name = str(node["$ref"]).rpartition("/")[2]
        if name in seen:  # a recursive model: its other paths are walked already
            return False
        seen.add(name)
        if name not in defs:
            return True
        return _may_hold_float(defs[name], defs, skip, seen)
    constrained = False
    for key in _COMBINATORS:
        if key in node:
            constrained = True
            if any(_may_hold_float(branch, defs, skip, seen) for branch in node[key]):
                return True
    for key in ("const", "enum"):
        if key in node:
            constrained = True
            values = node[key] if key == "enum" else [node[key]]
            if any(isinstance(value, float) for value in values):
                return True
    types = node.get("type")
    if types is None:
        return not constrained  # no type and nothing else: any JSON value
    for kind in [types] if isinstance(types, str) else types:
        if kind == "number" or (kind not in _TYPES):
            return True
        if kind == "array" and _array_may(node, defs, skip, seen):
            return True
        if kind == "object" and _object_may(node, defs, skip, seen):
            return True
    return False


_TYPES = frozenset({"string", "integer", "boolean", "null", "array", "object"})


def _array_may(
    node: Mapping[str, Any], defs: Mapping[str, Any], skip: tuple[str, str] | None, seen: set[str]
) -> bool:
    prefix = node.get("prefixItems", ())
    if any(_may_hold_float(item, defs, skip, seen) for item in prefix):
        return True
    if "items" in node:
        return _may_hold_float(node["items"], defs, skip, seen)
    return not prefix or node.get("maxItems") != len(prefix)


def _object_may(
    node: Mapping[str, Any], defs: Mapping[str, Any], skip: tuple[str, str] | None, seen: set[str]
) -> bool:
    properties: Mapping[str, Any] | None = node.get("properties")
    title = node.get("title")
    for name, value in (properties or {}).items():
        if (title, name) != skip and _may_hold_float(value, defs, skip, seen):
            return True
    for value in node.get("patternProperties", {}).values():
        if _may_hold_float(value, defs, skip, seen):
            return True
    if "additionalProperties" in node:
        return _may_hold_float(node["additionalProperties"], defs, skip, seen)
    # A model's schema lists its properties and writes nothing else; an object with
    # none listed is a free mapping.
    return properties is None


__all__ = [
    "may_hold_floats",
    "model_float_free",
    "schema_float_free",
]
