"""The bounds every stored JSON value keeps: nesting depth and integer range. A leaf
module, so that the failure value and the frozen-JSON checks share them without
importing each other."""

from typing import Annotated

from pydantic import Field

MAX_JSON_DEPTH = 64
"""How many levels of arrays/objects one JSON field may nest: a free-form JSON value
counting from the value itself, or a message's content counting from its array. With
the at most six levels of an event's envelope around it, every stored line stays far
below the shallowest parser dsh uses (pydantic-core reads 201 levels), and Python's
recursion limit (docs/decisions/2026-12-02-storable-values.md)."""

JSON_INT_MIN = -(2**63)
JSON_INT_MAX = 2**64 - 1
"""The integers a JSON value may hold: the signed and unsigned 64-bit ranges, which
every mainstream JSON reader (SQLite's JSON1, Go, Rust, the TypeScript harness for
ids) reads back exactly. Python reads bigger ones only up to a process-wide digit
limit, so they are refused instead of written and then found unreadable."""

NonNegativeInt = Annotated[int, Field(ge=0, le=JSON_INT_MAX)]
"""A count or duration that JSON readers everywhere read back exactly."""

__all__ = [
    "JSON_INT_MAX",
    "JSON_INT_MIN",
    "MAX_JSON_DEPTH",
    "NonNegativeInt",
]
