"""Derived history never holds one MessageId twice: an append that would put an id on
the surface a second time is refused and writes nothing; a replace that shadows the
holder may keep the id."""

from __future__ import annotations

import pytest

from dsh_session import Replace, Session, SessionValidationError

from .support import start_turn, user


def test_the_same_user_message_cannot_enter_history_twice() -> None:
    session = Session.create()
    prompt = user("once")
    _, event = start_turn(session, prompt)
    seq = session.seq

    with pytest.raises(SessionValidationError, match="already holds it") as refused:
        session.append("user/message", prompt)

    assert (refused.value.field, session.seq) == ("data.id", seq)
    assert [m.id for m in session.derive_messages()] == [prompt.id]
    assert session.surface_seq_of(prompt.id) == event.seq


def test_a_message_leaves_the_surface_when_a_replace_shadows_it() -> None:
    session = Session.create()
    first = user("first")
    _, event = start_turn(session, first)
    summary = user("summary of the first")
    replaced = session.append(
        "user/message",
        summary,
        surface_op=Replace(start=event.seq, end=event.seq),
        source_event_seqs=[event.seq],
    )

    assert session.surface_seq_of(first.id) is None
    assert session.surface_seq_of(summary.id) == replaced.seq
    assert [m.id for m in session.derive_messages()] == [summary.id]
