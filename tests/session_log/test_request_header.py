"""fold_request_header: the header the next request goes out with."""

from __future__ import annotations

from dsh_session import Session, fold_request_header

from .support import tool_turn


def header(model: str, system: str | None = None) -> dict[str, object]:
    value: dict[str, object] = {"config": {"provider": "p", "model": model}}
    if system:
        value["system"] = system
    return value


def test_no_header_logged_folds_to_none() -> None:
    session = Session.create()
    tool_turn(session)
    assert fold_request_header(session.events) is None
    assert session.request_header is None


def test_the_latest_snapshot_wins() -> None:
    session = Session.create()
    session.append("request/header", {"header": header("a", "first"), "reason": "initial"})
    tool_turn(session)
    session.append("request/header", {"header": header("b"), "reason": "change"})
    tool_turn(session, "call-2")
    folded = fold_request_header(session.events)
    assert folded is not None
    assert folded.config.model == "b"
    assert folded.system is None, "a header is a snapshot, not a delta"
    assert session.request_header is folded


def test_a_fork_inherits_the_header() -> None:
    session = Session.create()
    session.append("request/header", {"header": header("a"), "reason": "initial"})
    assert session.fork().request_header == session.request_header
