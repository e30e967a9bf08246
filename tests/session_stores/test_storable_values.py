"""Whatever creation, import or append accepts, every backend writes and reads back
equal, with the same id; what a store could not keep is refused up front, and deep
input never surfaces as a ``RecursionError`` (issue 8, item 1)."""

from __future__ import annotations

import asyncio
import math
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from dsh_llm import (
    JSON_INT_MAX,
    JSON_INT_MIN,
    MAX_JSON_DEPTH,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
    freeze_message,
)
from dsh_session._header import SessionHeader, new_session_id, now_ms
from dsh_session._parse import parse_events
from dsh_session._session import Session
from dsh_session.errors import SessionCorruptError, SessionFormatError, SessionValidationError
from dsh_session.stores import (
    JsonlSessionStore,
    MemorySessionStore,
    SessionStore,
    SqliteSessionStore,
)

from .scenarios import complete_turn
from .sqlite_files import layout_one

MODEL = {"provider": "p", "model": "m"}
DEEP = 100_000


def _stores(root: Path) -> dict[str, SessionStore]:
    return {
        "memory": MemorySessionStore(),
        "sqlite": SqliteSessionStore(root / "sessions.db"),
        "sqlite-layout1": SqliteSessionStore(layout_one(root / "layout1.db")),
        "jsonl": JsonlSessionStore(root / "sessions"),
    }


def _reload(store: SessionStore, session: Session) -> Session:
    async def flush_and_load() -> Session:
        store.attach(session)
        await store.flush(session)
        store.detach(session)
        return await store.load(session.id)

    return asyncio.run(flush_and_load())


def _assert_survives_every_backend(root: Path, session: Session) -> None:
    _assert_survives(_stores(root), session)


def _assert_survives(stores: dict[str, SessionStore], session: Session) -> None:
    for name, store in stores.items():
        loaded = _reload(store, session)
        if name == "sqlite":  # schema 17 has a column per known header field, no extras
            extras = set(session.header.model_extra or {})
            assert not loaded.header.model_extra, name
            assert loaded.header.model_dump(exclude=extras) == session.header.model_dump(
                exclude=extras
            ), name
        else:
            assert loaded.header == session.header, name
        assert list(loaded.events[: session.seq]) == list(session.events), name
        for kept, original in zip(loaded.events, session.events, strict=False):
            assert kept.model_dump_json() == original.model_dump_json(), name
        ids = [message.id for message in loaded.derive_messages()]
        assert ids == [message.id for message in session.derive_messages()], name


def _session_with(value: Any) -> Session:
    """A session whose one turn carries ``value`` in every kind of field that takes
    free-form JSON or text: prompt text, source extras, replay state, tool-call
    arguments, tool meta, plugin form extras and a header extra."""
    text = value if isinstance(value, str) else "text"
    header = SessionHeader.model_validate(
        {"id": new_session_id(), "createdAt": now_ms(), "note": value}
    )
    session = Session.create(header=header)
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append(
        "user/message",
        create_user_message(
            content=text,
            source={
                "kind": "plugin",
                "plugin": text,
                "form": {"kind": "relay", "extra": value},
                "meta": value,
            },
        ),
    )
    session.append(
        "request/header",
        {"header": {"config": {**MODEL, "extra": value}}, "reason": "initial"},
    )
    message = create_assistant_message(
        content=[{"type": "tool-call", "id": "c1", "name": text, "arguments": text}],
        source={**MODEL, "replayState": {"v": value}},
    )
    session.append("assistant/message", {"turn": 1, "step": 1, "message": message})
    call = session.append(
        "tool/call", {"turn": 1, "step": 1, "call_id": "c1", "name": text, "arguments": text}
    )
    result = create_tool_result_message(call_id="c1", content=text)
    session.append(
        "tool/result",
        {"turn": 1, "step": 1, "message": result, "meta": value},
        source_event_seqs=[call.seq],
    )
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return session


# --- the property -----------------------------------------------------------------------

_text = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=8)
"""Any text, lone surrogates included (``st.characters()`` alone leaves them out)."""
_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([JSON_INT_MIN, JSON_INT_MAX, JSON_INT_MIN - 1, JSON_INT_MAX + 1])
    | st.floats(allow_nan=True, allow_infinity=True)
    | _text
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=12,
)


def _nested(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


_deep = st.builds(
    _nested, _json, st.integers(min_value=MAX_JSON_DEPTH - 4, max_value=MAX_JSON_DEPTH + 2)
)


def _storable(value: Any, depth: int = 0) -> bool:
    """The test's own idea of what JSON keeps exactly (independent of dsh's walk)."""
    if isinstance(value, str):
        return not any(0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        return JSON_INT_MIN <= value <= JSON_INT_MAX
    if isinstance(value, float):
        return math.isfinite(value)
    if depth + 2 > MAX_JSON_DEPTH:  # in ``replayState: {"v": [value]}``, one level down
        return False
    if isinstance(value, dict):
        return all(_storable(k) and _storable(v, depth + 1) for k, v in value.items())
    return all(_storable(item, depth + 1) for item in value)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SessionStore]:
    """One store per backend for all examples (each example is its own session)."""
    return _stores(tmp_path_factory.mktemp("stores"))


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(value=_json | _deep)
def test_accepted_values_survive_every_backend_and_rejected_ones_are_validation_errors(
    value: Any, stores: dict[str, SessionStore]
) -> None:
    try:
        session = _session_with([value])
    except (ValidationError, SessionValidationError):
        assert not _storable([value])
        return
    assert _storable([value])
    _assert_survives(stores, session)


# --- the limits, exactly ----------------------------------------------------------------


def _nested_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _nested_tool_results(levels: int) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": "x"}
    for _ in range(levels):
        block = {"type": "tool-result", "toolCallId": "c1", "content": [block]}
    return block


def test_json_at_the_depth_limit_survives_every_backend(tmp_path: Path) -> None:
    session = Session.create()
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    deepest = _nested_list(MAX_JSON_DEPTH)
    prompt = freeze_message(
        {
            "id": "imported-1",
            "role": "user",
            "content": [_nested_tool_results((MAX_JSON_DEPTH - 2) // 2)],
            "source": {"kind": "user", "deep": deepest},
        }
    )
    session.append("user/message", prompt)
    session.append(
        "agent/inbox/spliced",
        {"target": "next-turn", "start": 0, "inserted": [prompt]},
    )
    _assert_survives_every_backend(tmp_path, session)


def test_one_level_deeper_is_refused_at_append_naming_the_field() -> None:
    session = Session.create()
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    with pytest.raises(SessionValidationError) as caught:
        session.append(
            "request/header",
            {
                "header": {"config": {**MODEL, "deep": _nested_list(MAX_JSON_DEPTH + 1)}},
                "reason": "initial",
            },
        )
    assert caught.value.field is not None
    assert "deep" in caught.value.field
    assert session.seq == 2


def test_a_lone_surrogate_is_refused_at_append_naming_the_field() -> None:
    session = Session.create()
    session.append("turn/start", {"turn": 1})
    session.append("step/start", {"turn": 1, "step": 1})
    with pytest.raises(SessionValidationError) as caught:
        session.append(
            "tool/call",
            {"turn": 1, "step": 1, "call_id": "c1", "name": "f", "arguments": '{"q": "\udcff"}'},
        )
    assert caught.value.field is not None
    assert "arguments" in caught.value.field


# --- deep or unencodable input on the read paths ----------------------------------------


def _deep_event_line() -> str:
    return '{"type":"turn/start","seq":0,"time":0,"data":{"turn":' + "[" * DEEP + "]" * DEEP + "}}"


@pytest.mark.parametrize(
    "row",
    [
        _deep_event_line(),
        _deep_event_line().encode(),
        '{"type":"x/y","ignorable":true,"seq":0,"time":0,"data":' + "[" * DEEP + "]" * DEEP + "}",
        '{"type":"turn/start","seq":0,"time":0,"data":{"turn":1,"x":"\\udcff"}}',
    ],
    ids=["deep-text", "deep-bytes", "deep-unknown", "lone-surrogate-escape"],
)
def test_parse_events_refuses_unreadable_rows_as_corruption(row: str | bytes) -> None:
    with pytest.raises(SessionCorruptError):
        parse_events([row])


def test_parse_events_refuses_a_deep_parsed_mapping() -> None:
    event: dict[str, Any] = {"type": "x/y", "ignorable": True, "seq": 0, "time": 0}
    event["data"] = _nested_list(DEEP)
    with pytest.raises(SessionCorruptError):
        parse_events([event])


def _assert_refused_as_damage(read: Callable[[], Any]) -> None:
    """``read`` fails with corruption or format error, with no RecursionError behind it."""
    with pytest.raises((SessionCorruptError, SessionFormatError)) as caught:
        asyncio.run(read())
    cause: BaseException | None = caught.value
    while cause is not None:
        assert not isinstance(cause, RecursionError)
        suppressed = cause.__suppress_context__
        cause = cause.__cause__ or (None if suppressed else cause.__context__)


def _stored_turn(store: SessionStore) -> Session:
    session = Session.create()

    async def store_it() -> None:
        store.attach(session)
        complete_turn(session)
        await store.flush(session)
        store.detach(session)

    asyncio.run(store_it())
    return session


def test_a_deep_jsonl_line_is_an_error_not_a_recursion_error(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path, compression="none", pack_chunks=False)
    session = _stored_turn(store)
    path = store.path_of(session.id)
    lines = path.read_bytes().split(b"\n")
    lines[2] = _deep_event_line().replace('"seq":0', '"seq":1').encode()
    path.write_bytes(b"\n".join(lines))

    _assert_refused_as_damage(lambda: JsonlSessionStore(tmp_path).load(session.id))


def test_a_deep_sqlite_row_is_an_error_not_a_recursion_error(tmp_path: Path) -> None:
    database = layout_one(tmp_path / "sessions.db")
    session = _stored_turn(SqliteSessionStore(database))
    with sqlite3.connect(database) as db:
        db.execute(
            "UPDATE dsh_events SET event = ? WHERE session_id = ? AND seq = 1",
            (_deep_event_line().replace('"seq":0', '"seq":1'), session.id),
        )

    _assert_refused_as_damage(lambda: SqliteSessionStore(database).load(session.id))
    _assert_refused_as_damage(lambda: SqliteSessionStore(database).read(session.id))


def test_a_deep_header_is_an_error_not_a_recursion_error(tmp_path: Path) -> None:
    store = JsonlSessionStore(tmp_path, compression="none", pack_chunks=False)
    session = _stored_turn(store)
    path = store.path_of(session.id)
    lines = path.read_bytes().split(b"\n")
    lines[0] = lines[0][:-1] + b',"origin":' + b"[" * DEEP + b"]" * DEEP + b"}"
    path.write_bytes(b"\n".join(lines))

    _assert_refused_as_damage(lambda: JsonlSessionStore(tmp_path).load(session.id))
