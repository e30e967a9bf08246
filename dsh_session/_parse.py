"""Bulk validation of stored events: raw JSON lines (or parsed mappings) to events.

Loading a long log is dominated by allocation: validating 100k events creates
millions of small, acyclic, immutable objects. CPython's cyclic garbage collector
runs a young-generation pass every 700 allocations and rescans the growing older
generations again and again, so with the collector running a bulk load measured
3.1-3.4x the floor of reading rows plus ``json.loads``; with it paused, 1.1-1.8x.
Nothing built here can form a reference cycle (frozen models over strings, numbers
and tuples), so :func:`parse_events` pauses the collector for the batch and restores
it afterwards, even on error. Reference counting still frees garbage as usual.

Re-enabling the collector would make its next young pass walk every object the batch
built (about 10 ms for 20k events, then again in the middle generation), although
these objects are long-lived by nature. So on exit the collector first moves every
tracked object into its oldest generation (``gc.freeze()`` then ``gc.unfreeze()``, two
list splices in CPython), where only full collections visit them; see
docs/decisions/2026-12-04-load-promotes-to-old-generation.md. A process that keeps many
loaded sessions and wants full collections to skip them too may call ``gc.freeze()``
itself; that is a process-wide decision, so this module does not make it.
"""

from __future__ import annotations

import functools
import gc
import sysconfig
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json

from dsh_session._header import SessionHeader
from dsh_session._session import Session
from dsh_session.errors import SessionCorruptError, SessionFormatError
from dsh_session.events import EVENT_CLASSES, LogEvent, SessionEventAdapter

RawEvent = str | bytes | Mapping[str, Any]
"""A stored event: its wire JSON text, or that JSON already parsed."""


def parse_events(raw: Iterable[RawEvent]) -> list[LogEvent]:
    """Validate stored events, in order, in one pass.

    An unknown event type is kept only when marked ``ignorable: true``; otherwise
    :class:`SessionFormatError` names the type and seq. Any other malformed event raises
    :class:`SessionCorruptError` naming its seq (its own ``seq`` when readable, else its
    position) and the field at fault. Seq contiguity and the log rules are checked by
    ``Session.from_log``.
    """
    rows = raw if isinstance(raw, list) else list(raw)
    events: list[LogEvent] = []
    with collector_paused():
        try:
            # Mapped straight onto pydantic-core's validator when the rows are of one
            # kind (every store reads one): no Python frame per event. ``extend`` keeps
            # what it got before the first bad row, so ``events`` ends right before it.
            events.extend(map(_validator_for(rows), rows))
        except ValidationError:
            position = len(events)
            raise _diagnose(rows[position], position) from None
    return events


def parse_log(
    header: SessionHeader,
    raw: Iterable[RawEvent],
    *,
    strict: bool = False,
    row_at: Callable[[int], RawEvent] | None = None,
) -> tuple[list[LogEvent], Session | None]:
    """:func:`parse_events`, and the session the events make when every log rule holds
    (else ``None``: ``Session.from_log`` on the events raises what is wrong). Each
    event is checked as soon as it is validated, while it is still in the CPU's
    caches, so a load reads its events once instead of twice. A malformed event
    raises as :func:`parse_events` does, even after a rule failed earlier in the log:
    a store reports the damage before the rules. ``strict`` validates JSON rows in
    pydantic's strict mode (nothing coerced).

    With ``row_at`` (which reads the row at a position again, to explain a failure),
    ``raw`` is consumed lazily and must yield JSON text: each row is freed as soon as
    its event is built, as a reader streaming rows from a cursor frees them, instead
    of every row staying alive until the last event is built."""
    rows: Iterable[RawEvent]
    if row_at is None:
        listed = raw if isinstance(raw, list) else list(raw)
        rows, row_at = listed, listed.__getitem__
        validate = _validate_json_strictly if strict else _validator_for(listed)
    else:
        rows, validate = raw, _validate_json_strictly if strict else _validate_json
    session = Session(header)
    with collector_paused():
        try:
            valid = session._take_checked(map(validate, rows))
        except ValidationError:
            position = session.seq
            raise _diagnose(row_at(position), position) from None
    events = list(session.events)  # the session appends to its own list later
    return events, session if valid else None


_validate_json = SessionEventAdapter.validator.validate_json
_validate_python = SessionEventAdapter.validator.validate_python
_validate_json_strictly = functools.partial(_validate_json, strict=True)
_JSON_TEXT = (str, bytes)


def _validator_for(rows: list[RawEvent]) -> Callable[[Any], LogEvent]:
    """The validator for every row: JSON text, parsed mappings, or a mix of both."""
    kinds = set(map(type, rows))
    if kinds <= {str, bytes}:
        return _validate_json
    if not any(issubclass(kind, _JSON_TEXT) for kind in kinds):
        return _validate_python
    return _validate_either


def _validate_either(item: RawEvent) -> LogEvent:
    if isinstance(item, _JSON_TEXT):
        return _validate_json(item)  # type: ignore[no-any-return]
    return _validate_python(item)  # type: ignore[no-any-return]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause CPython's cyclic garbage collector for a bulk build of acyclic objects and
    restore its previous state on exit, even when the build fails, with what was built
    already in the oldest generation."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _promote_to_oldest()
            gc.enable()


_PROMOTION_IS_CHEAP = not sysconfig.get_config_var("Py_GIL_DISABLED")
"""Freezing splices the generation lists with the GIL; a free-threaded build instead
marks every object on the heap, which would cost more than the pass it saves."""


def _promote_to_oldest() -> None:
    """Move every tracked object into the oldest generation, without a collection. Not
    when the process froze objects itself: unfreezing would hand those back too."""
    if _PROMOTION_IS_CHEAP and not gc.get_freeze_count():
        gc.freeze()
        gc.unfreeze()


def _diagnose(item: RawEvent, position: int) -> SessionFormatError | SessionCorruptError:
    """Explain why ``item`` failed: an unknown type (format) or a damaged event."""
    if isinstance(item, (str, bytes)):
        try:
            value = from_json(item)
        except ValueError as error:
            return SessionCorruptError(
                f"the event at position {position} is not JSON: {error}", seq=position
            )
    else:
        value = item
    if not isinstance(value, Mapping):
        return SessionCorruptError(
            f"the event at position {position} is not a JSON object", seq=position
        )
    found_seq = value.get("seq")
    seq = found_seq if isinstance(found_seq, int) and not isinstance(found_seq, bool) else position
    event_type = value.get("type")
    event_class = EVENT_CLASSES.get(event_type) if isinstance(event_type, str) else None
    if event_class is None and isinstance(event_type, str) and value.get("ignorable") is not True:
        return SessionFormatError(
            f"event {seq} has type {event_type!r}, which this version of dsh does not know "
            "and which is not marked ignorable; upgrade dsh to read this log",
            event_type=event_type,
            seq=seq,
        )
    # Validate against the one class the type names, for an error without the noise
    # of the other union members.
    validate = (
        SessionEventAdapter.validate_python if event_class is None else event_class.model_validate
    )
    try:
        validate(value)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        return SessionCorruptError(
            f"event {seq} ({event_type!r}) is invalid: {field}: {first['msg']}",
            seq=seq,
            field=field,
        )
    return SessionCorruptError(f"event {seq} ({event_type!r}) is invalid", seq=seq)


__all__ = [
    "RawEvent",
    "collector_paused",
    "parse_events",
    "parse_log",
]
