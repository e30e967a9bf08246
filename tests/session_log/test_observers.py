"""Observers see each committed event once, in order; a failing observer neither undoes
the commit nor stops the others."""

from __future__ import annotations

import logging

import pytest

from dsh_session import Session, SessionEvent, SessionValidationError

from .support import Recorder, user


def test_observers_see_each_committed_event_in_order() -> None:
    session = Session.create()
    seen = Recorder()
    session.subscribe(seen)
    first = session.append("user/message", user())
    second = session.append("user/message", user())
    assert seen.events == [first, second]


def test_an_observer_sees_the_event_already_committed() -> None:
    session = Session.create()
    seqs: list[int] = []
    session.subscribe(lambda event: seqs.append(session.seq))
    session.append("user/message", user())
    assert seqs == [1]


def test_unsubscribe_stops_notifications_and_is_idempotent() -> None:
    session = Session.create()
    seen = Recorder()
    unsubscribe = session.subscribe(seen)
    session.append("user/message", user())
    unsubscribe()
    unsubscribe()
    session.append("user/message", user())
    assert len(seen.events) == 1


def test_a_failing_observer_does_not_undo_the_commit_or_stop_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session = Session.create()

    def broken(event: SessionEvent) -> None:
        raise RuntimeError("observer bug")

    after = Recorder()
    session.subscribe(broken)
    session.subscribe(after)
    with caplog.at_level(logging.ERROR, logger="dsh_session"):
        event = session.append("user/message", user())
    assert session.events == (event,)
    assert after.events == [event]
    assert "observer bug" in caplog.text


def test_an_observer_may_not_append_to_the_same_session() -> None:
    session = Session.create()
    failures: list[Exception] = []

    def echo(event: SessionEvent) -> None:
        try:
            session.append("user/message", user("echo"))
        except SessionValidationError as error:
            failures.append(error)

    session.subscribe(echo)
    session.append("user/message", user())
    assert session.seq == 1
    assert len(failures) == 1
    assert "observer" in str(failures[0])
    session.append("user/message", user("appending works again afterwards"))
    assert session.seq == 2


def test_the_same_function_subscribed_twice_is_called_twice() -> None:
    session = Session.create()
    seen = Recorder()
    session.subscribe(seen)
    session.subscribe(seen)
    session.append("user/message", user())
    assert len(seen.events) == 2
