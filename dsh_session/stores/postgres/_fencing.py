"""Fenced single writers on PostgreSQL: who owns a session, and writes only the owner
can make.

Every store object holds a random 63-bit *token* as a session-level advisory lock on
its writer connection, for as long as it lives; PostgreSQL drops the lock when that
connection ends, however the process died. A session row names its owner by token.
A claim (``load``) is one statement that raises the session's epoch and writes its
own token, and succeeds only if the row has no owner, is its own, or names a token
whose lock nobody holds any more (``pg_try_advisory_xact_lock`` gets it, so that
owner is gone), or if the caller takes the session over on purpose. Nothing waits:
a live owner makes the claim fail at once.

Each flush is one transaction sent as one pipeline (``BEGIN``, fence, inserts,
``COMMIT`` in a single round trip, so the server finishes it whatever the client does
next and no stalled client holds a lock). The fence, ``dsh_advance`` (``schema.py``),
moves the row's ``head`` forward only if ``head`` and ``epoch`` are still what this
writer last saw, and otherwise raises SQLSTATE ``DSH01``, which aborts the
transaction before any insert: a fenced writer inserts nothing. The update's row
lock orders it against a concurrent claim. (A single statement with ``unnest`` of
arrays, or inserts each guarded by an ``EXISTS``, do the same but cost 1.4-4x the raw
floor for 100 events.)

Once the flush has committed, the store sends a ``NOTIFY`` naming the session and
its new head to followers (``follow.py``), in a transaction of its own that does not
wait for the disk (``notify.py`` says why).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus

from dsh_session._header import SessionHeader, SessionId
from dsh_session.errors import SessionConflictError, SessionNotFoundError, StoreError

CHANNEL = "dsh_session_events"
"""The NOTIFY channel; each payload is ``<session id> <head>``."""

Connection = psycopg.Connection[tuple[Any, ...]]
Statements = Sequence[tuple[str, Sequence[Sequence[Any]]]]
"""Statements and their parameter rows, run inside a write's transaction."""
IDLE = TransactionStatus.IDLE


@dataclass(frozen=True)
class Fence:
    """What a writer last saw of a session it owns."""

    epoch: int
    head: int
    """How many events are stored: the seq the writer's next event must have."""


def take_token(connection: Connection) -> int:
    """Hold a fresh token as a session-level advisory lock on ``connection``."""
    while True:
        token = secrets.randbits(63)
        row = connection.execute("SELECT pg_try_advisory_lock(%s)", (token,)).fetchone()
        if row and row[0]:
            return token


def retake_token(connection: Connection, token: int) -> None:
    """Hold ``token`` again on a new connection (after the old one broke)."""
    connection.execute("SELECT pg_try_advisory_lock(%s)", (token,))


_CREATE = "SELECT dsh_create(%s, %s, %s, %s, %s, %s, %s)"
_ADVANCE = "SELECT dsh_advance(%s, %s, %s, %s, %s)"
_INSERT = "INSERT INTO dsh_events (session_id, seq, event) VALUES (%s, %s, %s)"

_CLAIM = """
UPDATE dsh_sessions SET epoch = epoch + 1, owner_token = %(token)s, owner = %(owner)s
WHERE id = %(sid)s AND (
    %(take_over)s OR owner_token IS NULL OR owner_token = %(token)s
    OR pg_try_advisory_xact_lock(owner_token)
)
RETURNING epoch, head
"""

_CURRENT = "SELECT epoch, head, owner_token, owner FROM dsh_sessions WHERE id = %s"


def _write(
    connection: Connection,
    fence_sql: str,
    fence_params: Sequence[Any],
    session_id: SessionId,
    rows: Sequence[tuple[int, str]],
    also: Statements,
) -> psycopg.Error | None:
    """Run the fence and the inserts as one transaction, sent in one pipeline, so the
    server runs it to its end whatever the client does next. Return ``None`` when it
    committed, else the error that aborted it (nothing was written; the caller looks
    at the session's row to tell a refusing fence from a failure)."""
    try:
        with connection.pipeline():
            connection.execute("BEGIN")
            connection.execute(fence_sql.encode(), fence_params)
            if rows:
                connection.cursor().executemany(
                    _INSERT, [(session_id, seq, event) for seq, event in rows]
                )
            for sql, params in also:
                if params:
                    connection.cursor().executemany(sql.encode(), params)
            connection.execute("COMMIT")
    except psycopg.Error as error:
        if not connection.broken and connection.info.transaction_status != IDLE:
            connection.execute("ROLLBACK")
        return error
    return None


def create(
    connection: Connection,
    header: SessionHeader,
    rows: Sequence[tuple[int, str]],
    *,
    token: int,
    owner: str,
    where: str,
    also: Statements = (),
) -> Fence:
    """Store a new session with its first events, owned by ``token`` at epoch 1; the
    statements ``also`` run in the same transaction (the search index's)."""
    created = (header.id, header.created_at, header.model_dump_json(), len(rows), token, owner)
    error = _write(connection, _CREATE, (*created, False), header.id, rows, also)
    if error is None:
        return Fence(epoch=1, head=len(rows))
    if _already_written(connection, header.id, Fence(epoch=1, head=0), rows, token=token):
        return Fence(epoch=1, head=len(rows))
    if connection.execute(_CURRENT, (header.id,)).fetchone() is None:
        raise error  # not refused by the fence: the write itself failed
    raise StoreError(
        f"session {header.id!r} already exists in {where}; load it instead of "
        "attaching a new session with the same id"
    )


def append(
    connection: Connection,
    session_id: SessionId,
    fence: Fence,
    rows: Sequence[tuple[int, str]],
    *,
    where: str,
    also: Statements = (),
) -> Fence:
    """Append events at ``fence.head``, or raise :class:`SessionConflictError` (nothing
    written) when another writer claimed the session since; the statements ``also``
    run in the same transaction."""
    advance = (session_id, fence.epoch, fence.head, len(rows), False)
    error = _write(connection, _ADVANCE, advance, session_id, rows, also)
    if error is None:
        return Fence(fence.epoch, fence.head + len(rows))
    if _already_written(connection, session_id, fence, rows):
        return Fence(fence.epoch, fence.head + len(rows))
    current = connection.execute(_CURRENT, (session_id,)).fetchone()
    if current is not None and (current[0], current[1]) == (fence.epoch, fence.head):
        raise error  # the fence held: the write itself failed
    raise _conflict(connection, session_id, fence, where)


def _already_written(
    connection: Connection,
    session_id: SessionId,
    fence: Fence,
    rows: Sequence[tuple[int, str]],
    *,
    token: int | None = None,
) -> bool:
    """Whether an earlier attempt at this very batch committed though its answer was
    lost (a broken connection): then the stored rows are these rows, at this epoch
    (and, for a creation, under this writer's token)."""
    current = connection.execute(_CURRENT, (session_id,)).fetchone()
    if current is None or current[0] != fence.epoch or current[1] < fence.head + len(rows):
        return False
    if token is not None and current[2] != token:
        return False
    stored = connection.execute(
        "SELECT seq, event FROM dsh_events WHERE session_id = %s AND seq >= %s AND seq < %s "
        "ORDER BY seq",
        (session_id, fence.head, fence.head + len(rows)),
    ).fetchall()
    return [tuple(row) for row in stored] == [tuple(row) for row in rows]


def _conflict(
    connection: Connection, session_id: SessionId, fence: Fence, where: str
) -> SessionConflictError:
    current = connection.execute(_CURRENT, (session_id,)).fetchone()
    now, holder = (current[0], current[3]) if current is not None else (None, None)
    return SessionConflictError(
        f"session {session_id!r} in {where} was taken over by another writer "
        f"({holder or 'holder unknown'}, epoch {now}; this writer holds epoch "
        f"{fence.epoch}); nothing of this batch was written",
        session_id=session_id,
        holder=holder,
    )


def claim(
    connection: Connection,
    session_id: SessionId,
    *,
    token: int,
    owner: str,
    take_over: bool,
    where: str,
) -> Fence:
    """Own a stored session from now on, fencing every earlier writer; refuse at once
    while a live store owns it, unless ``take_over``."""
    params = {"sid": session_id, "token": token, "owner": owner, "take_over": take_over}
    for _ in range(3):  # the owner may let go between the claim and the look that follows
        found = connection.execute(_CLAIM, params).fetchone()
        if found is not None:
            return Fence(epoch=int(found[0]), head=int(found[1]))
        current = connection.execute(_CURRENT, (session_id,)).fetchone()
        if current is None:
            raise SessionNotFoundError(session_id, where)
        if current[2] is not None:
            holder = current[3]
            raise SessionConflictError(
                f"session {session_id!r} in {where} is being written by another writer "
                f"({holder or 'holder unknown'}); only one writer may load a session at a "
                "time (load(..., take_over=True) takes it from a writer that is stuck)",
                session_id=session_id,
                holder=holder,
            )
    raise StoreError(f"{where}: could not claim session {session_id!r}: its owner kept changing")


def release(connection: Connection, token: int, session_ids: Sequence[SessionId]) -> None:
    """Give up those of ``session_ids`` this token still owns. The commit does not wait
    for the disk (``detach`` runs this on the event loop's thread): a release lost to
    a server crash costs nothing, as the token's lock died with the connection."""
    if not session_ids:
        return
    with connection.pipeline():
        connection.execute("BEGIN")
        connection.execute("SET LOCAL synchronous_commit = off")
        connection.execute(
            "UPDATE dsh_sessions SET owner_token = NULL, owner = NULL "
            "WHERE id = ANY(%s) AND owner_token = %s",
            (list(session_ids), token),
        )
        connection.execute("COMMIT")


def delete(
    connection: Connection, session_id: SessionId, token: int, where: str, also: Statements = ()
) -> None:
    """Remove a session this token has just claimed, header row and events in one
    transaction: a crash leaves it whole (owned by a dead token, so free) or gone. Each
    statement of ``also`` runs in it with the session id."""
    with connection.transaction():
        removed = connection.execute(
            "DELETE FROM dsh_sessions WHERE id = %s AND owner_token = %s", (session_id, token)
        )
        if removed.rowcount != 1:
            raise SessionConflictError(
                f"session {session_id!r} in {where} was taken by another writer before "
                "it could be deleted; nothing was removed",
                session_id=session_id,
                holder=None,
            )
        connection.execute("DELETE FROM dsh_events WHERE session_id = %s", (session_id,))
        for sql, _ in also:
            connection.execute(sql.encode(), (session_id,))


__all__ = [
    "CHANNEL",
    "IDLE",
    "Connection",
    "Fence",
    "append",
    "claim",
    "create",
    "delete",
    "release",
    "retake_token",
    "take_token",
]
