"""SQLite schema 17: the harness's ts.db decodes to the expected events, and rows
encode exactly as the harness inserts them."""

from __future__ import annotations

import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from dsh_session._harness_format import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    EventRow,
    append_batch,
    create_database,
    decode_source_event_seqs,
    encode_source_event_seqs,
    physical_rows,
    read_database,
    read_plain_log,
)
from dsh_session.errors import (
    HarnessCorruptError,
    HarnessSchemaError,
    SessionValidationError,
    SourceSeqsError,
)

from .fixtures import SCENARIOS, TS_LOGS, artifact, expected_session

TS_DB = TS_LOGS / "sqlite" / "ts.db"
_ROWS = (
    "SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable"
    " FROM events WHERE session_id = ? ORDER BY seq"
)


def _stored_rows(path: Path, session_id: str) -> list[EventRow]:
    with sqlite3.connect(path) as connection:
        return [EventRow(*row) for row in connection.execute(_ROWS, (session_id,))]


@pytest.fixture
def harness_db(tmp_path: Path) -> Path:
    path = tmp_path / "ts.db"
    shutil.copyfile(TS_DB, path)
    return path


def test_every_session_of_the_harness_database_decodes_as_the_harness_held_it() -> None:
    sessions = {s.header["id"]: s for s in read_database(TS_DB)}
    assert sorted(sessions) == sorted(SCENARIOS)
    for scenario in SCENARIOS:
        expected = expected_session(scenario)
        assert sessions[scenario].header == expected["header"]
        assert sessions[scenario].events == expected["events"]
        unpacked = read_plain_log(artifact("jsonl-unpacked", scenario).read_bytes())
        assert sessions[scenario].events == unpacked.events
        assert sessions[scenario].torn_from is None


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_encoding_the_events_gives_the_harness_rows_byte_for_byte(scenario: str) -> None:
    assert physical_rows(expected_session(scenario)["events"]) == _stored_rows(TS_DB, scenario)


def test_large_data_is_a_zstd_blob_and_small_data_stays_text() -> None:
    rows = physical_rows(expected_session("compaction")["events"])
    blobs = [r for r in rows if isinstance(r.data, bytes)]
    assert [r.type for r in blobs] == ["tool/result"]
    assert all(len(r.data.encode()) < 4096 for r in rows if isinstance(r.data, str))


def test_source_event_seqs_use_varint_and_zigzag_deltas() -> None:
    assert encode_source_event_seqs(list(range(7, 21))) == bytes.fromhex("07" + "02" * 13)
    assert encode_source_event_seqs([54, 55, 4, 18, 25, 33, 38]) == bytes.fromhex("3602651c0e100a")
    assert encode_source_event_seqs([300, 299]) == bytes.fromhex("ac0201")
    assert decode_source_event_seqs(bytes.fromhex("ac0201")) == [300, 299]


@pytest.mark.parametrize("blob", ["80", "8000", "ffffffffffffffffff01"])
def test_a_truncated_non_canonical_or_huge_varint_is_refused(blob: str) -> None:
    with pytest.raises(SourceSeqsError):
        decode_source_event_seqs(bytes.fromhex(blob))


def test_a_database_written_here_reads_back_and_has_the_harness_identity(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    connection = create_database(path)
    for scenario in SCENARIOS:
        session = expected_session(scenario)
        events = session["events"]
        append_batch(connection, session["header"], events[:10])
        append_batch(connection, session["header"], events[10:])
    connection.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert check.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert check.execute("SELECT revision FROM sessions").fetchall() == [(2,)] * len(SCENARIOS)
    for stored in read_database(path):
        assert stored.events == expected_session(stored.header["id"])["events"]


def test_an_append_that_does_not_continue_the_log_is_refused(tmp_path: Path) -> None:
    connection = create_database(tmp_path / "new.db")
    session = expected_session("plain-text")
    append_batch(connection, session["header"], session["events"][:5])
    with pytest.raises(SessionValidationError) as caught:
        append_batch(connection, session["header"], session["events"][6:])
    assert caught.value.seq == 5


def test_an_existing_file_is_never_overwritten(harness_db: Path) -> None:
    with pytest.raises(FileExistsError):
        create_database(harness_db)


@pytest.mark.parametrize("pragma", ["user_version = 16", "application_id = 7"])
def test_another_schema_or_application_is_refused(harness_db: Path, pragma: str) -> None:
    with sqlite3.connect(harness_db) as connection:
        connection.execute(f"PRAGMA {pragma}")
    with pytest.raises(HarnessSchemaError):
        read_database(harness_db)


def test_an_extra_table_is_refused(harness_db: Path) -> None:
    with sqlite3.connect(harness_db) as connection:
        connection.execute("CREATE TABLE extra (x INTEGER) STRICT")
    with pytest.raises(HarnessSchemaError):
        read_database(harness_db)


def test_a_bad_row_after_the_last_turn_end_is_a_torn_tail_left_in_place(harness_db: Path) -> None:
    with sqlite3.connect(harness_db) as connection:
        connection.execute(
            "INSERT INTO events VALUES"
            " ('plain-text', 24, 'turn/start', 1, '{bad', NULL, NULL, NULL)"
        )
    [stored] = [s for s in read_database(harness_db) if s.header["id"] == "plain-text"]
    assert stored.torn_from == 24
    assert stored.events == expected_session("plain-text")["events"]
    assert len(_stored_rows(harness_db, "plain-text")) == 16


def test_a_bad_row_before_a_turn_end_is_committed_corruption(harness_db: Path) -> None:
    with sqlite3.connect(harness_db) as connection:
        connection.execute(
            "UPDATE events SET data = '{bad' WHERE session_id = 'plain-text' AND seq = 3"
        )
    with pytest.raises(HarnessCorruptError) as caught:
        read_database(harness_db)
    assert caught.value.seq == 3
