"""The PostgreSQL layout and its explicit migrations.

``dsh_schema(version)`` holds one row: the layout version. Migrations are the numbered
SQL scripts in :data:`MIGRATIONS`, applied in order inside one transaction that first
takes a transaction-level advisory lock, so two processes opening a fresh database at
once neither fail nor apply a step twice. Only ``mode="create"`` migrates; ``open`` and
``read`` check the version and change nothing.

Version 1:

- ``dsh_sessions(id, created_at, header, head, epoch, owner_token, owner)``: the
  header's wire JSON, how many events are stored (``head``, the next seq), the writer
  epoch (the fencing token, see ``fencing.py``) and the owning store (``owner_token``,
  a key that store holds as a session-level advisory lock while it lives; ``owner`` is
  its name for errors). ``NULL`` owner: nobody writes the session.
- ``dsh_events(session_id, seq, event)``: each event's wire JSON as text (the exact
  bytes dsh wrote, not ``jsonb``, which would reorder keys), keyed by
  ``(session_id, seq)``.
- ``dsh_advance`` and ``dsh_create``: the fence of a flush as writers of earlier dsh
  versions run it, raising SQLSTATE ``DSH01`` (fenced) or ``DSH02`` (the id exists)
  to abort their transaction, with an optional ``NOTIFY`` inside it (``p_notify``).
  This version fences in the flush's own statement instead (``fencing.py``), to the
  same effect; the functions stay for those writers sharing the database.
"""

from __future__ import annotations

from dsh_session.errors import StoreError, StoreNotFoundError
from dsh_session.stores._base import StoreMode
from dsh_session.stores.postgres._fencing import Connection

LAYOUT_VERSION = 1
"""The version this code reads and writes."""

MIGRATIONS: dict[int, str] = {
    1: """
        CREATE TABLE dsh_sessions (
            id TEXT PRIMARY KEY,
            created_at BIGINT NOT NULL,
            header TEXT NOT NULL,
            head BIGINT NOT NULL,
            epoch BIGINT NOT NULL,
            owner_token BIGINT,
            owner TEXT
        );
        CREATE TABLE dsh_events (
            session_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            event TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        CREATE FUNCTION dsh_advance(
            p_id TEXT, p_epoch BIGINT, p_head BIGINT, p_count BIGINT, p_notify BOOLEAN
        ) RETURNS void LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE dsh_sessions SET head = head + p_count
            WHERE id = p_id AND epoch = p_epoch AND head = p_head;
            IF NOT FOUND THEN
                RAISE EXCEPTION USING ERRCODE = 'DSH01', MESSAGE = 'dsh: session fenced';
            END IF;
            IF p_notify THEN
                PERFORM pg_notify('dsh_session_events', p_id || ' ' || (p_head + p_count));
            END IF;
        END $$;
        CREATE FUNCTION dsh_create(
            p_id TEXT, p_created_at BIGINT, p_header TEXT, p_count BIGINT, p_token BIGINT,
            p_owner TEXT, p_notify BOOLEAN
        ) RETURNS void LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO dsh_sessions (id, created_at, header, head, epoch, owner_token, owner)
            VALUES (p_id, p_created_at, p_header, p_count, 1, p_token, p_owner)
            ON CONFLICT (id) DO NOTHING;
            IF NOT FOUND THEN
                RAISE EXCEPTION USING ERRCODE = 'DSH02', MESSAGE = 'dsh: session exists';
            END IF;
            IF p_notify THEN
                PERFORM pg_notify('dsh_session_events', p_id || ' ' || p_count);
            END IF;
        END $$;
    """,
}
"""Version -> the script that brings the layout from the previous version to it."""

_MIGRATION_LOCK = 0x6473685F736368  # "dsh_sch": serialises concurrent migrators


def stored_version(connection: Connection) -> int | None:
    """The layout version in the connected schema, or ``None`` without dsh's tables."""
    found = connection.execute("SELECT to_regclass('dsh_schema') IS NOT NULL").fetchone()
    if not found or not found[0]:
        return None
    row = connection.execute("SELECT max(version) FROM dsh_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def prepare(connection: Connection, mode: StoreMode, where: str) -> None:
    """Bring the layout to :data:`LAYOUT_VERSION` (``create``), or check that it is
    there (``open``/``read``); refuse a layout written by a newer dsh."""
    version = stored_version(connection)
    connection.commit()
    if version is not None and version > LAYOUT_VERSION:
        raise StoreError(f"{where}: layout version {version} was written by a newer dsh; upgrade")
    if version == LAYOUT_VERSION:
        return
    if mode != "create":
        raise StoreNotFoundError(where, "the database holds no dsh tables (layout version 1)")
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        connection.execute("CREATE TABLE IF NOT EXISTS dsh_schema (version INTEGER NOT NULL)")
        version = stored_version(connection) or 0
        for step in range(version + 1, LAYOUT_VERSION + 1):
            connection.execute(MIGRATIONS[step].encode())
            connection.execute("INSERT INTO dsh_schema (version) VALUES (%s)", (step,))


__all__ = [
    "LAYOUT_VERSION",
    "MIGRATIONS",
    "prepare",
    "stored_version",
]
