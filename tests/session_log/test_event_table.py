"""The one table of event types is the source of every event-type vocabulary: what
derives from it at run time is checked to equal it, and what type checkers need spelled
out (the Literal unions, the LogEvent union, each class's literal and base, the
overloads of ``Session.append``) is checked to follow it, both ways."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_overloads, get_type_hints

import pytest

from dsh_session import (
    EVENT_TYPES,
    SURFACE_TYPES,
    ForeignEvent,
    ForeignEventType,
    LogEvent,
    UnknownEvent,
)
from dsh_session._events.envelope import PlainEvent, SurfaceEvent
from dsh_session._events.log_event import KnownEventClasses
from dsh_session._events.table import EVENT_TABLE, HARNESS_EVENT_TYPES, EventTypeRow
from dsh_session._harness_format import KNOWN_SESSION_EVENT_TYPES, SURFACE_EVENT_TYPES
from dsh_session._typed_append import TypedAppend
from dsh_session.events import EVENT_CLASSES, TypedEventType

TYPED = [row for row in EVENT_TABLE if row.event_class is not ForeignEvent]
FOREIGN = [row for row in EVENT_TABLE if row.event_class is ForeignEvent]
HARNESS_DOC = Path(__file__).parents[2] / "docs" / "harness-format.md"


def test_each_type_has_exactly_one_row() -> None:
    types = [row.type for row in EVENT_TABLE]
    assert len(types) == len(set(types)) == 48


def test_the_run_time_sets_derive_from_the_table() -> None:
    assert {row.type for row in EVENT_TABLE} == EVENT_TYPES
    assert {row.type for row in EVENT_TABLE if row.surface} == SURFACE_TYPES
    assert (
        SURFACE_TYPES == SURFACE_EVENT_TYPES == {"user/message", "assistant/message", "tool/result"}
    )
    assert {row.type for row in EVENT_TABLE if row.harness} == KNOWN_SESSION_EVENT_TYPES
    assert KNOWN_SESSION_EVENT_TYPES == HARNESS_EVENT_TYPES
    assert {row.type: row.event_class for row in EVENT_TABLE} == EVENT_CLASSES


def test_the_literal_unions_spell_out_the_table_in_its_order() -> None:
    assert list(get_args(TypedEventType)) == [row.type for row in TYPED]
    assert list(get_args(ForeignEventType)) == [row.type for row in FOREIGN]


def test_the_log_event_union_lists_the_table_classes_in_its_order() -> None:
    classes = list(dict.fromkeys(row.event_class for row in EVENT_TABLE))
    assert list(get_args(KnownEventClasses)) == classes
    assert list(get_args(LogEvent)) == [*classes, UnknownEvent]


@pytest.mark.parametrize("row", TYPED, ids=lambda row: row.type)
def test_each_typed_class_matches_its_row(row: EventTypeRow) -> None:
    fields = row.event_class.model_fields
    type_annotation: object = fields["type"].annotation
    assert type_annotation == Literal[row.type]
    assert fields["type"].default == row.type
    assert fields["data"].annotation is row.payload
    assert issubclass(row.event_class, SurfaceEvent if row.surface else PlainEvent)
    assert not issubclass(row.event_class, PlainEvent if row.surface else SurfaceEvent)
    others = [other.type for other in EVENT_TABLE if other.event_class is row.event_class]
    assert others == [row.type]


def test_foreign_rows_are_plain_frozen_json() -> None:
    for row in FOREIGN:
        assert (row.payload, row.surface, row.harness) == (None, False, True)
    type_annotation: object = ForeignEvent.model_fields["type"].annotation
    assert type_annotation == ForeignEventType
    assert issubclass(ForeignEvent, PlainEvent)


def _overloads() -> list[dict[str, Any]]:
    return [get_type_hints(overload) for overload in get_overloads(TypedAppend.__call__)]


def test_append_has_one_overload_per_typed_row_and_no_other() -> None:
    literal_types = [
        get_args(hints["type"])[0]
        for hints in _overloads()
        if hints["type"] not in (str, ForeignEventType)
    ]
    missing = [row.type for row in TYPED if row.type not in literal_types]
    extra = [kind for kind in literal_types if kind not in {row.type for row in TYPED}]
    assert (missing, extra) == ([], [])
    assert len(literal_types) == len(set(literal_types))


@pytest.mark.parametrize("row", TYPED, ids=lambda row: row.type)
def test_each_typed_overload_takes_the_payload_and_returns_the_class(row: EventTypeRow) -> None:
    (hints,) = [hints for hints in _overloads() if hints["type"] == Literal[row.type]]
    assert set(get_args(hints["data"])) == {row.payload, Mapping[str, Any]}
    assert hints["return"] is row.event_class


def test_the_foreign_and_fallback_overloads_come_last() -> None:
    *_, foreign, fallback = _overloads()
    assert foreign["type"] == ForeignEventType
    assert (foreign["data"], foreign["return"]) == (Any, ForeignEvent)
    assert (fallback["type"], fallback["data"], fallback["return"]) == (str, Any, LogEvent)


def _documented_vocabulary() -> tuple[set[str], set[str]]:
    """The types of the table in docs/harness-format.md §9, and those it marks surface."""
    section = HARNESS_DOC.read_text().split("## 9. The event vocabulary", 1)[1]
    section = section.split("\n## ", 1)[0]
    types: set[str] = set()
    surface: set[str] = set()
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cells = line.split(" | ")
        named = set(re.findall(r"`([^`]+)`", cells[0]))
        types |= named
        if "(+surface)" in line:
            surface |= named
    return types, surface


def test_the_harness_rows_are_the_documented_harness_vocabulary() -> None:
    # An independent record of the harness's known-event-types.ts: the table's harness
    # column cannot drift from it silently.
    types, surface = _documented_vocabulary()
    assert types == KNOWN_SESSION_EVENT_TYPES
    assert surface == SURFACE_TYPES
