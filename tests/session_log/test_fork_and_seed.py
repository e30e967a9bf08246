"""fork() and Session.create(seed=...): a new session that starts from a prefix of
another log, keeping its events and messages (same objects, same ids)."""

from __future__ import annotations

import pytest

from dsh_session import EndSeedEvent, Session, SessionHeader, SessionValidationError

from .support import start_turn, tool_turn, user


def test_fork_keeps_the_parents_events_and_message_objects() -> None:
    parent = Session.create(header=SessionHeader(id="parent", created_at=1, cwd="/work"))
    tool_turn(parent)
    child = parent.fork()
    assert child.id != parent.id
    assert all(a is b for a, b in zip(child.events, parent.events, strict=False))
    assert all(
        a is b for a, b in zip(child.derive_messages(), parent.derive_messages(), strict=True)
    )
    assert len(child.derive_messages()) == 4


def test_fork_appends_end_seed_and_records_its_origin() -> None:
    parent = Session.create(header=SessionHeader(id="parent", created_at=1, cwd="/work"))
    tool_turn(parent)
    child = parent.fork()
    assert isinstance(child.events[-1], EndSeedEvent)
    assert child.seq == parent.seq + 1
    assert child.header.parent_session == "parent"
    assert child.header.seed_length == parent.seq
    assert child.header.cwd == "/work"


def test_fork_at_a_boundary_takes_the_events_up_to_and_including_it() -> None:
    parent = Session.create()
    first = tool_turn(parent)
    tool_turn(parent, "call-2")
    boundary = first.answer.seq + 2  # answer, step/end, turn/end
    child = parent.fork(boundary)
    assert child.header.seed_length == boundary + 1
    assert len(child.derive_messages()) == 4
    assert child.last_turn == 1


def test_fork_continues_turn_numbers_and_does_not_affect_the_parent() -> None:
    parent = Session.create()
    tool_turn(parent)
    child = parent.fork()
    parent_seq = parent.seq
    turn, _ = start_turn(child)
    assert turn == 2
    assert parent.seq == parent_seq


@pytest.mark.parametrize("offset", [0, 1, 3])
def test_fork_refuses_a_boundary_inside_an_open_turn(offset: int) -> None:
    parent = Session.create()
    done = tool_turn(parent)
    inside = done.prompt.seq - 2 + offset  # turn/start, step/start, the prompt, ...
    with pytest.raises(SessionValidationError, match="inside turn 1") as refused:
        parent.fork(inside)
    assert refused.value.field == "boundary_seq"


def test_fork_refuses_a_boundary_that_is_not_an_event() -> None:
    parent = Session.create()
    parent.append("user/message", user())
    for boundary in (-1, 1):
        with pytest.raises(SessionValidationError, match="not an event"):
            parent.fork(boundary)


def test_fork_at_the_next_seq_says_that_fork_keeps_the_whole_log() -> None:
    parent = Session.create()
    tool_turn(parent)
    with pytest.raises(SessionValidationError, match=r"next event: fork\(\) keeps the whole"):
        parent.fork(parent.seq)
    assert parent.fork(parent.seq - 1).header.seed_length == parent.fork().header.seed_length


def test_fork_of_a_session_with_a_turn_still_open_refuses_the_default_boundary() -> None:
    parent = Session.create()
    start_turn(parent)
    with pytest.raises(SessionValidationError):
        parent.fork()


def test_fork_of_an_empty_session_is_just_the_end_seed() -> None:
    child = Session.create().fork()
    assert [event.type for event in child.events] == ["session/end-seed"]
    assert child.header.seed_length == 0


def test_create_with_a_seed_validates_it_and_marks_where_it_ends() -> None:
    source = Session.create()
    tool_turn(source)
    seeded = Session.create("seeded", seed=source.events)
    assert seeded.id == "seeded"
    assert seeded.header.seed_length == source.seq
    assert isinstance(seeded.events[-1], EndSeedEvent)
    assert seeded.derive_messages()[0] is source.derive_messages()[0]


def test_create_refuses_a_seed_ending_inside_a_turn() -> None:
    source = Session.create()
    start_turn(source)
    with pytest.raises(SessionValidationError, match="inside turn 1"):
        Session.create(seed=source.events)


def test_create_refuses_a_seed_with_a_gap() -> None:
    source = Session.create()
    tool_turn(source)
    events = list(source.events)
    del events[3]
    with pytest.raises(SessionValidationError, match="gap") as refused:
        Session.create(seed=events)
    assert refused.value.seq == 3


def test_create_refuses_an_id_that_cannot_name_a_file() -> None:
    for bad in ("..", "a/b", "x" * 129, ""):
        with pytest.raises(SessionValidationError):
            Session.create(bad)


def test_create_refuses_an_id_that_contradicts_the_header() -> None:
    with pytest.raises(SessionValidationError, match="header"):
        Session.create("one", header=SessionHeader(id="two", created_at=0))
