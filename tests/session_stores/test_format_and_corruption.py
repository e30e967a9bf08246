"""Logs this version cannot read are refused with a format error; damaged logs with a
corruption error; both name what is wrong. SQLite has no torn tail: any gap or bad row
is corruption."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_session._harness_format import (
    append_batch,
    delete_session,
    encode_frame,
    read_database,
    read_log,
)
from dsh_session._session import Session
from dsh_session.errors import SessionCorruptError, SessionFormatError, StoreError
from dsh_session.events import UnknownEvent
from dsh_session.stores import (
    JsonlSessionStore,
    PostgresSessionStore,
    SessionStore,
    SqliteSessionStore,
)

from .conftest import StoreFactory
from .scenarios import complete_turn, loads_back
from .sqlite_files import layout_of, layout_one

Tamper = Callable[[list[dict[str, object]]], None]
"""Changes a stored log given as its header followed by its events (wire JSON)."""


async def _stored_then_tampered(open_store: StoreFactory, path: Path, tamper: Tamper) -> str:
    """Flush one turn through the store, then rewrite the stored log with ``tamper``."""
    store = open_store()
    session = Session.create("victim")
    store.attach(session)
    complete_turn(session)
    await store.close()
    if isinstance(store, SqliteSessionStore):
        _tamper_sqlite(store.path, tamper)
    elif isinstance(store, PostgresSessionStore):
        _tamper_postgres(store.dsn, tamper)
    else:
        assert isinstance(store, JsonlSessionStore)
        _tamper_jsonl(store.path_of(session.id), tamper)
    return session.id


def _tamper_jsonl(path: Path, tamper: Tamper) -> None:
    """Rewrite a harness-form log (zstd frames) with ``tamper``, unpacked, in two
    frames: the header and one batch."""
    log = read_log(path.read_bytes(), compressed=True)
    lines = [log.header, *log.events]
    tamper(lines)
    texts = ["".join(json.dumps(line) + "\n" for line in part) for part in (lines[:1], lines[1:])]
    path.write_bytes(b"".join(encode_frame(text.encode()) for text in texts))


def _tamper_sqlite(path: Path, tamper: Tamper) -> None:
    if layout_of(path) == "schema 17":
        _tamper_schema_17(path, tamper)
        return
    db = sqlite3.connect(path, isolation_level=None)
    (header,) = db.execute("SELECT header FROM dsh_sessions WHERE id = 'victim'").fetchone()
    rows = db.execute(
        "SELECT event FROM dsh_events WHERE session_id = 'victim' ORDER BY seq"
    ).fetchall()
    log = [json.loads(header), *(json.loads(row) for (row,) in rows)]
    tamper(log)
    db.execute("BEGIN")
    db.execute("UPDATE dsh_sessions SET header = ? WHERE id = 'victim'", (json.dumps(log[0]),))
    db.execute("DELETE FROM dsh_events WHERE session_id = 'victim'")
    db.executemany(
        "INSERT INTO dsh_events (session_id, seq, event) VALUES ('victim', ?, ?)",
        [(event["seq"], json.dumps(event)) for event in log[1:]],
    )
    db.execute("COMMIT")
    db.close()


def _tamper_schema_17(path: Path, tamper: Tamper) -> None:
    """Rewrite the session's rows in the harness's schema, unpacked, as one batch."""
    [stored] = read_database(path)
    log = [dict(stored.header), *stored.events]
    tamper(log)
    db = sqlite3.connect(path, isolation_level=None)
    try:
        assert delete_session(db, "victim")
        append_batch(db, log[0], log[1:], create=True)
    finally:
        db.close()


def _tamper_postgres(dsn: str, tamper: Tamper) -> None:
    import psycopg

    with psycopg.connect(dsn) as db:
        found = db.execute("SELECT header FROM dsh_sessions WHERE id = 'victim'").fetchone()
        assert found is not None
        (header,) = found
        rows = db.execute(
            "SELECT event FROM dsh_events WHERE session_id = 'victim' ORDER BY seq"
        ).fetchall()
        log = [json.loads(header), *(json.loads(row) for (row,) in rows)]
        tamper(log)
        db.execute(
            "UPDATE dsh_sessions SET header = %s, head = %s WHERE id = 'victim'",
            (json.dumps(log[0]), len(log) - 1),
        )
        db.execute("DELETE FROM dsh_events WHERE session_id = 'victim'")
        db.cursor().executemany(
            "INSERT INTO dsh_events (session_id, seq, event) VALUES ('victim', %s, %s)",
            [(event["seq"], json.dumps(event)) for event in log[1:]],
        )


def _set_version(log: list[dict[str, object]]) -> None:
    log[0]["version"] = 1


async def test_a_newer_format_version_is_a_format_error(
    durable_store: StoreFactory, tmp_path: Path
) -> None:
    session_id = await _stored_then_tampered(durable_store, tmp_path, _set_version)

    with pytest.raises(SessionFormatError, match="newer"):
        await durable_store().load(session_id)


def _rename_type(seq: int, new_type: str, *, ignorable: bool = False) -> Tamper:
    def tamper(log: list[dict[str, object]]) -> None:
        event = log[seq + 1]
        event["type"] = new_type
        if ignorable:
            event["ignorable"] = True

    return tamper


async def test_an_unknown_required_event_type_is_a_format_error_naming_type_and_seq(
    durable_store: StoreFactory, tmp_path: Path
) -> None:
    session_id = await _stored_then_tampered(
        durable_store, tmp_path, _rename_type(3, "plugin/unknown-required")
    )

    with pytest.raises(SessionFormatError, match="plugin/unknown-required") as raised:
        await durable_store().load(session_id)
    assert (raised.value.event_type, raised.value.seq) == ("plugin/unknown-required", 3)


def _append_ignorable(log: list[dict[str, object]]) -> None:
    seq = len(log) - 1
    log.append(
        {"type": "ui/bookmark", "seq": seq, "time": 1, "data": {"label": "here"}, "ignorable": True}
    )


async def test_an_unknown_ignorable_event_is_kept_and_round_trips(
    durable_store: StoreFactory, tmp_path: Path
) -> None:
    session_id = await _stored_then_tampered(durable_store, tmp_path, _append_ignorable)
    store = durable_store()

    loaded = await store.load(session_id)
    complete_turn(loaded)
    await store.close()
    reloaded = await durable_store().load(session_id)

    (bookmark,) = [event for event in reloaded.events if str(event.type) == "ui/bookmark"]
    assert isinstance(bookmark, UnknownEvent)
    assert bookmark.data == {"label": "here"}
    assert list(reloaded.events[: loaded.seq]) == list(loaded.events)


def _break_payload(log: list[dict[str, object]]) -> None:
    event = log[4]
    assert event["type"] == "request/header"
    event["data"] = {"header": {"config": {"provider": ""}}, "reason": "initial"}


async def test_an_invalid_event_is_corruption_naming_its_seq(
    durable_store: StoreFactory, tmp_path: Path
) -> None:
    session_id = await _stored_then_tampered(durable_store, tmp_path, _break_payload)

    with pytest.raises(SessionCorruptError) as raised:
        await durable_store().load(session_id)
    assert raised.value.seq == 3


async def _sqlite_session(tmp_path: Path) -> tuple[Path, Session]:
    path = layout_one(tmp_path / "s.db")
    store = SqliteSessionStore(path)
    session = Session.create("victim")
    store.attach(session)
    complete_turn(session)
    await store.close()
    return path, session


def _execute(path: Path, sql: str, *parameters: object) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(sql, parameters)
    db.close()


async def test_sqlite_missing_row_is_corruption_not_a_torn_tail(tmp_path: Path) -> None:
    path, session = await _sqlite_session(tmp_path)
    _execute(path, "DELETE FROM dsh_events WHERE seq = ?", session.seq - 1)
    _execute(path, "DELETE FROM dsh_events WHERE seq = 5")

    with pytest.raises(SessionCorruptError, match="no event at seq 5") as raised:
        await SqliteSessionStore(path).load(session.id)
    assert raised.value.seq == 5


async def test_sqlite_gap_is_reported_before_an_earlier_damaged_row(tmp_path: Path) -> None:
    """The rows stream into the validator; a gap further on still wins over a damaged
    row before it, as when every seq was checked before the first row was read."""
    path, session = await _sqlite_session(tmp_path)
    _execute(path, 'UPDATE dsh_events SET event = \'{"type": "turn/e\' WHERE seq = 2')
    _execute(path, "DELETE FROM dsh_events WHERE seq = ?", session.seq - 2)

    with pytest.raises(SessionCorruptError, match=f"no event at seq {session.seq - 2}") as raised:
        await SqliteSessionStore(path).load(session.id)
    assert raised.value.seq == session.seq - 2


async def test_sqlite_damaged_row_in_the_middle_is_named_by_its_seq(tmp_path: Path) -> None:
    path, session = await _sqlite_session(tmp_path)
    _execute(path, 'UPDATE dsh_events SET event = \'{"type": "turn/e\' WHERE seq = 2')

    with pytest.raises(SessionCorruptError, match="at position 2 is not JSON") as raised:
        await SqliteSessionStore(path).load(session.id)
    assert raised.value.seq == 2


async def test_sqlite_unreadable_last_row_is_corruption(tmp_path: Path) -> None:
    path, session = await _sqlite_session(tmp_path)
    _execute(
        path, 'UPDATE dsh_events SET event = \'{"type": "turn/e\' WHERE seq = ?', session.seq - 1
    )

    with pytest.raises(SessionCorruptError, match="not JSON") as raised:
        await SqliteSessionStore(path).load(session.id)
    assert raised.value.seq == session.seq - 1


async def test_sqlite_row_whose_event_names_another_seq_is_corruption(tmp_path: Path) -> None:
    path, session = await _sqlite_session(tmp_path)
    _execute(
        path,
        "UPDATE dsh_events SET event = json_set(event, '$.seq', 99) WHERE seq = 2",
    )

    with pytest.raises(SessionCorruptError) as raised:
        await SqliteSessionStore(path).load(session.id)
    assert raised.value.seq == 2


async def test_sqlite_database_from_a_newer_layout_is_refused(tmp_path: Path) -> None:
    path, _ = await _sqlite_session(tmp_path)
    _execute(path, "PRAGMA user_version = 2")

    with pytest.raises(StoreError, match="layout version 2"):
        SqliteSessionStore(path)


async def test_sqlite_shares_its_file_with_other_tables(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    _execute(path, "CREATE TABLE app_users (name TEXT)")
    store: SessionStore = SqliteSessionStore(path)
    session = Session.create()
    store.attach(session)
    complete_turn(session)
    await store.close()

    await loads_back(SqliteSessionStore(path), session)
