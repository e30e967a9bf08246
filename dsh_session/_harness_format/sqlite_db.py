"""Read and write the harness's SQLite database, schema 17.

Source: session-persistence-sqlite/resources/sql/schema.sql, src/schema.ts, store.ts.
Three STRICT tables (``persistence_state``, ``sessions``, ``events``), ``PRAGMA
user_version = 17``, ``PRAGMA application_id = 0x44534850`` ("DSHP"), database file
mode 0600. A database whose version, application id or table definitions differ is
refused, as the harness refuses it.
"""

from __future__ import annotations

import os
import re
import sqlite3
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_session._harness_format.chunk_rows import SQLITE_BOUNDS, pack_chunk_runs
from dsh_session._harness_format.sqlite_codec import EventRow, decode_row, encode_record
from dsh_session.errors import HarnessCorruptError, HarnessSchemaError, SessionValidationError

Json = dict[str, Any]

SCHEMA_VERSION = 17
APPLICATION_ID = 0x44534850

SCHEMA_SQL = """\
CREATE TABLE persistence_state (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  store_id  TEXT NOT NULL
) STRICT;

CREATE TABLE sessions (
  id               TEXT PRIMARY KEY,
  version          INTEGER NOT NULL,
  created_at       INTEGER NOT NULL,
  cwd              TEXT,
  parent_session   TEXT,
  seed_length      INTEGER,
  origin           TEXT,
  delegation_depth INTEGER,
  agent_preset     TEXT,
  incarnation      TEXT NOT NULL,
  revision         INTEGER NOT NULL
) STRICT;

CREATE TABLE events (
  session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq               INTEGER NOT NULL,
  type              TEXT NOT NULL,
  time              INTEGER NOT NULL,
  data              ANY NOT NULL,
  source_event_seqs ANY,
  surface_op        TEXT,
  ignorable         INTEGER CHECK (ignorable IS NULL OR ignorable IN (0, 1)),
  PRIMARY KEY (session_id, seq)
) STRICT;
"""
"""The DDL of schema 17, as the harness executes it."""

_HEADER_COLUMNS = (
    ("cwd", "cwd"),
    ("parent_session", "parentSession"),
    ("seed_length", "seedLength"),
    ("origin", "origin"),
    ("delegation_depth", "delegationDepth"),
    ("agent_preset", "agentPreset"),
)
_SCHEMA_OBJECTS = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
_SELECT_EVENTS = (
    "SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable "
    "FROM events WHERE session_id = ? ORDER BY seq"
)


@dataclass(frozen=True)
class StoredSession:
    """One session read from the database."""

    header: Json
    """``version``, ``id``, ``createdAt`` and each non-NULL optional column, in the
    harness's header names (``delegationDepth`` is absent when NULL)."""
    events: list[Any]
    torn_from: int | None = None
    """Seq of the first physical row past the committed prefix (a crash tail), if any.
    Its rows stay in the database; nothing here deletes them."""


def _normalized(text: str | None) -> str | None:
    return None if text is None else re.sub(r"\s+", " ", text).strip()


def _canonical_objects() -> list[tuple[Any, ...]]:
    reference = sqlite3.connect(":memory:")
    try:
        reference.executescript(SCHEMA_SQL)
        return [(*row[:3], _normalized(row[3])) for row in reference.execute(_SCHEMA_OBJECTS)]
    finally:
        reference.close()


def check_schema(connection: sqlite3.Connection, *, where: str) -> None:
    """Refuse a database that is not the harness's schema 17."""
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA_VERSION:
        raise HarnessSchemaError(f"{where} has schema version {version}, not {SCHEMA_VERSION}")
    application = connection.execute("PRAGMA application_id").fetchone()[0]
    if application != APPLICATION_ID:
        raise HarnessSchemaError(f"{where} has application id {application}, not {APPLICATION_ID}")
    objects = [(*row[:3], _normalized(row[3])) for row in connection.execute(_SCHEMA_OBJECTS)]
    if objects != _canonical_objects():
        raise HarnessSchemaError(f"{where} does not hold exactly the schema-17 tables")


def _header(row: dict[str, Any]) -> Json:
    header: Json = {"version": row["version"], "id": row["id"], "createdAt": row["created_at"]}
    for column, name in _HEADER_COLUMNS:
        if row[column] is not None:
            header[name] = row[column]
    return header


def _scan_rows(rows: list[EventRow]) -> tuple[list[Any], int | None]:
    """The contiguous logical prefix and where a removable tail starts (store.ts
    ``scanRows``): a bad row before the last ``turn/end`` is committed corruption."""
    decoded: list[list[Any] | None] = []
    for row in rows:
        try:
            decoded.append(decode_row(row))
        except (HarnessCorruptError, ValueError):
            decoded.append(None)
    last_turn_end = max(
        (
            i
            for i, events in enumerate(decoded)
            if events and any(e.get("type") == "turn/end" for e in events if isinstance(e, dict))
        ),
        default=-1,
    )
    preserved: list[Any] = []
    for index, (row, events) in enumerate(zip(rows, decoded, strict=True)):
        contiguous = events is not None and all(
            isinstance(e, dict) and e.get("seq") == len(preserved) + k for k, e in enumerate(events)
        )
        if not contiguous or events is None:
            if index <= last_turn_end:
                raise HarnessCorruptError(
                    f"invalid committed row at seq {row.seq}", seq=row.seq, field="events"
                )
            return preserved, row.seq
        preserved.extend(events)
    return preserved, None


def read_database(path: Path) -> list[StoredSession]:
    """Every session of a harness database, opened read-only, in ``id`` order."""
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        check_schema(connection, where=str(path))
        return [_read_stored(connection, header) for header in read_headers(connection)]
    finally:
        connection.close()


def read_headers(connection: sqlite3.Connection) -> list[Json]:
    """The header of every session, in ``id`` order (see :attr:`StoredSession.header`)."""
    cursor = connection.execute("SELECT * FROM sessions ORDER BY id")
    names = [column[0] for column in cursor.description]
    return [_header(dict(zip(names, row, strict=True))) for row in cursor]


def read_stored_session(connection: sqlite3.Connection, session_id: str) -> StoredSession | None:
    """One session of a schema-17 database, or ``None`` when it has no such session;
    run it inside a read transaction to see one snapshot."""
    cursor = connection.execute("SELECT * FROM sessions WHERE id = ?", (session_id,))
    names = [column[0] for column in cursor.description]
    found = cursor.fetchone()
    if found is None:
        return None
    return _read_stored(connection, _header(dict(zip(names, found, strict=True))))


def _read_stored(connection: sqlite3.Connection, header: Json) -> StoredSession:
    rows = [EventRow(*r) for r in connection.execute(_SELECT_EVENTS, (header["id"],))]
    events, torn_from = _scan_rows(rows)
    return StoredSession(header=header, events=events, torn_from=torn_from)


def create_database(path: Path) -> sqlite3.Connection:
    """A new, empty schema-17 database file created with mode 0600 (refuses an existing
    file), in WAL mode with ``synchronous = FULL`` as the harness opens it. The caller
    owns the returned connection."""
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    return initialize_database(path)


def initialize_database(path: Path) -> sqlite3.Connection:
    """Give an existing database file that holds no table (an empty file, say) the
    schema-17 tables, as :func:`create_database` does for a new one. Raises
    :class:`FileExistsError` when, by the time this connection holds the write lock,
    the database has tables (another connection created them first)."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("BEGIN IMMEDIATE")
        if connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise FileExistsError(f"{path} was given tables by another connection meanwhile")
        for statement in SCHEMA_SQL.split(";"):
            if statement.strip():
                connection.execute(statement)
        connection.execute(
            "INSERT INTO persistence_state (singleton, store_id) VALUES (1, ?)",
            (str(uuid.uuid4()),),
        )
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        connection.close()
        raise
    return connection


def physical_rows(events: Iterable[Any]) -> list[EventRow]:
    """The rows the harness inserts for one append batch (packed within SQLite's bounds)."""
    return [encode_record(record) for record in pack_chunk_runs(events, SQLITE_BOUNDS)]


def _next_seq(connection: sqlite3.Connection, session_id: str) -> int:
    last = connection.execute(
        _SELECT_EVENTS.replace("ORDER BY seq", "ORDER BY seq DESC LIMIT 1"), (session_id,)
    ).fetchone()
    return 0 if last is None else int(decode_row(EventRow(*last))[-1]["seq"]) + 1


def append_batch(
    connection: sqlite3.Connection,
    header: Json,
    events: list[Any],
    *,
    create: bool = False,
    before_commit: Callable[[sqlite3.Connection], None] | None = None,
) -> None:
    """Append one batch to a session in one transaction, creating its row on first use,
    and bump its ``revision`` as the harness does. With ``create`` the session must not
    exist yet (a second session with its id is refused, field ``id``). ``before_commit``
    runs last inside the transaction (dsh's search index writes there)."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        exists = connection.execute(
            "SELECT 1 FROM sessions WHERE id = ?", (header["id"],)
        ).fetchone()
        if create and exists is not None:
            raise SessionValidationError(
                f"session {header['id']!r} already exists in the database", field="id"
            )
        expected = _next_seq(connection, header["id"])
        if events and events[0].get("seq") != expected:
            raise SessionValidationError(
                f"append to {header['id']!r} starts at seq {events[0].get('seq')},"
                f" the stored next seq is {expected}",
                seq=expected,
                field="seq",
            )
        if exists is None:
            connection.execute(
                "INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length,"
                " origin, delegation_depth, agent_preset, incarnation, revision)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                (
                    header["id"],
                    header["version"],
                    header["createdAt"],
                    *(header.get(name) for _, name in _HEADER_COLUMNS),
                    str(uuid.uuid4()),
                ),
            )
        connection.executemany(
            "INSERT INTO events (session_id, seq, type, time, data, source_event_seqs,"
            " surface_op, ignorable) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    header["id"],
                    r.seq,
                    r.type,
                    r.time,
                    r.data,
                    r.source_event_seqs,
                    r.surface_op,
                    r.ignorable,
                )
                for r in physical_rows(events)
            ],
        )
        connection.execute(
            "UPDATE sessions SET revision = revision + 1 WHERE id = ?", (header["id"],)
        )
        if before_commit is not None:
            before_commit(connection)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def delete_session(
    connection: sqlite3.Connection,
    session_id: str,
    *,
    before_commit: Callable[[sqlite3.Connection], None] | None = None,
) -> bool:
    """Remove a session's row and all its event rows in one transaction; whether it
    existed. (The harness itself never deletes; its schema cascades, this says so.)
    ``before_commit`` runs last inside the transaction."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
        found = connection.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
        if before_commit is not None:
            before_commit(connection)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return found > 0


__all__ = [
    "APPLICATION_ID",
    "SCHEMA_SQL",
    "SCHEMA_VERSION",
    "Json",
    "StoredSession",
    "append_batch",
    "check_schema",
    "create_database",
    "delete_session",
    "initialize_database",
    "physical_rows",
    "read_database",
    "read_headers",
    "read_stored_session",
]
