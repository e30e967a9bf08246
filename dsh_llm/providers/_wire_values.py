"""Values taken from a provider's stream events, checked before they become dsh
values.

The official SDKs build their event models without validating them, so a field
declared ``str`` or ``int`` can hold anything the server sent. Each reader here
takes one field, names it by its wire path when it is unusable, and returns it in
the form dsh stores (text passes through :func:`storable_text`).
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from dsh_llm._ids import CallId, CallIdField
from dsh_llm._storable_text import storable_text
from dsh_llm.providers._errors import _MalformedResponseError

_CALL_ID: TypeAdapter[CallId] = TypeAdapter(CallIdField)
ItemT = TypeVar("ItemT")


def optional_text(value: object, field: str) -> str | None:
    """A string field that may be absent, returned as sent: delta text is made
    storable by its block's :class:`SurrogateJoiner`, which may join it with the next."""
    if value is None or isinstance(value, str):
        return value
    raise _MalformedResponseError(field, f"is {_shown(value)}, not a string")


def optional_name(value: object, field: str) -> str | None:
    """A whole string (a name, a signature, a stop reason), made storable."""
    text = optional_text(value, field)
    return None if text is None else storable_text(text)


def optional_call_id(value: object, field: str) -> CallId | None:
    """A provider's tool-call id, absent or empty meaning not yet known."""
    text = optional_name(value, field)
    if not text:
        return None
    try:
        return _CALL_ID.validate_python(text)
    except ValidationError:
        raise _MalformedResponseError(
            field, f"is {_shown(text)}, not a call id dsh can hold"
        ) from None


def optional_count(value: object, field: str) -> int | None:
    """A token count that may be absent."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise _MalformedResponseError(field, f"is {_shown(value)}, not a non-negative integer")


def required_count(value: object, field: str) -> int:
    count = optional_count(value, field)
    if count is None:
        raise _MalformedResponseError(field, "is missing")
    return count


def index(value: object, field: str) -> int:
    """A position the provider numbers its stream parts by."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _MalformedResponseError(field, f"is {_shown(value)}, not an integer")


def items(value: list[ItemT] | None, field: str) -> list[ItemT]:
    """A list field that may be absent (no items then)."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise _MalformedResponseError(field, f"is {_shown(value)}, not a list")


def wire_object(value: object, field: str) -> BaseModel:
    """A nested object of an event, which the SDK leaves as sent when it is not one
    (a list, a number, ``null``)."""
    if isinstance(value, BaseModel):
        return value
    raise _MalformedResponseError(field, f"is {_shown(value)}, not an object")


def _shown(value: object) -> str:
    """A short, storable rendering of an offending value."""
    shown = repr(value)
    return shown if len(shown) <= 80 else f"{shown[:77]}..."


__all__ = [
    "index",
    "items",
    "optional_call_id",
    "optional_count",
    "optional_name",
    "optional_text",
    "required_count",
    "wire_object",
]
