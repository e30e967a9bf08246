"""Session.from_log checks a whole log in one loop over the stored events: it must
answer exactly as appending the events one at a time would, naming the same first
break (a rule broken before a gap is named before the gap, and the other way round)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_session import Session, SessionCorruptError, SessionEvent, SessionValidationError
from dsh_session._session import _envelope_problem

from .test_derivation_properties import Operation, apply, operations

Damage = tuple[str, int, int]
damages = st.lists(
    st.tuples(
        st.sampled_from(["drop", "move", "repeat", "not an event", "renumber"]),
        st.integers(0, 200),
        st.integers(0, 200),
    ),
    min_size=1,
    max_size=3,
)


def one_at_a_time(session: Session, events: list[Any]) -> list[Any] | tuple[Any, ...]:
    """The reference: each event checked and applied on its own, in order."""
    for expected, event in enumerate(events):
        if not isinstance(event, SessionEvent) or event.seq != expected:
            return (_envelope_problem(event, expected), expected, None)
        try:
            session._state.advance(event)
        except SessionValidationError as rejection:
            return (str(rejection), rejection.seq, rejection.field)
        session._events.append(event)
    return list(session.events)


def whole(session: Session, events: list[Any]) -> list[Any] | tuple[Any, ...]:
    try:
        return list(Session.from_log(session.header, events).events)
    except SessionCorruptError as error:
        return (str(error), error.seq, error.field)


def damaged(events: list[Any], damage: list[Damage]) -> list[Any]:
    events = list(events)
    for kind, a, b in damage:
        i, j = a % len(events), b % len(events)
        if kind == "drop" and len(events) > 1:
            del events[i]
        elif kind == "move":
            events.insert(j, events.pop(i))
        elif kind == "repeat":
            events.insert(j, events[i])
        elif kind == "not an event" and isinstance(events[i], SessionEvent):
            events[i] = events[i].model_dump(mode="json", by_alias=True)
        elif kind == "renumber":  # every event from i on takes its position as its seq
            events[i:] = [
                renumbered(event, seq) if isinstance(event, SessionEvent) else event
                for seq, event in enumerate(events[i:], i)
            ]
    return events


def renumbered(event: SessionEvent, seq: int) -> SessionEvent:
    wire = event.model_dump(mode="json", by_alias=True)
    return type(event).model_validate({**wire, "seq": seq})


@settings(max_examples=150, deadline=None)
@given(operations, damages)
def test_from_log_names_the_first_break_as_appending_one_by_one(
    ops: list[Operation], damage: list[Damage]
) -> None:
    session = Session.create()
    for operation in [("tools", 0, 0), *ops]:
        apply(session, operation)
    events = damaged(list(session.events), damage)
    assert whole(session, events) == one_at_a_time(Session(session.header), events)
