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

Each flush is one statement, so one implicit transaction and one message each way
(the server finishes it whatever the client does next, and no stalled client holds a
lock): a ``WITH`` whose first part, ``fence``, moves the row's ``head`` forward only if
``head`` and ``epoch`` are still what this writer last saw (or, for a new session,
inserts its row unless one exists), and whose inserts (the events, the search index's
rows) take their session id from ``fence``: when the fence refuses, it yields no row,
every insert inserts nothing, and the statement answers 0 instead of 1. The update's
row lock orders it against a concurrent claim. The events go as two arrays in binary
(``unnest``), so neither side parses or escapes them as text. (A pipeline of
``BEGIN``, a plpgsql fence, an ``executemany`` per table and ``COMMIT`` did the same
with 6 client calls and about 18 socket writes a flush, and cost 1.5x the CPU,
client and server; ``dsh_advance``/``dsh_create`` stay in the schema for writers of
earlier versions.)

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
"""Statements and their parameter rows (``delete`` runs each with the session id)."""
IDLE = TransactionStatus.IDLE


@dataclass(frozen=True)
class Rider:
    """A data-modifying part of a write's statement that writes only when the fence
    passed: ``sql`` (an ``INSERT ... SELECT`` or the like) reads the session id from
    ``fence.id`` and takes ``params``."""

    sql: str
    params: Sequence[Any]


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


_CREATE = (
    "INSERT INTO dsh_sessions (id, created_at, header, head, epoch, owner_token, owner) "
    "VALUES (%s, %s, %s, %s, 1, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id"
)
_ADVANCE = (
    "UPDATE dsh_sessions SET head = head + %s WHERE id = %s AND epoch = %s AND head = %s "
    "RETURNING id"
)
_EVENTS = Rider(
    "INSERT INTO dsh_events (session_id, seq, event) SELECT fence.id, e.seq, e.event "
    "FROM fence, unnest(%b::bigint[], %b::text[]) AS e(seq, event)",
    (),
)

_CLAIM = """
UPDATE dsh_sessions SET epoch = epoch + 1, owner_token = %(token)s, owner = %(owner)s
WHERE id = %(sid)s AND (
    %(take_over)s OR owner_token IS NULL OR owner_token = %(token)s
    OR pg_try_advisory_xact_lock(owner_token)
)
RETURNING epoch, head
"""

_CURRENT = "SELECT epoch, head, owner_token, owner FROM dsh_sessions WHERE id = %s"


def fenced(fence_sql: str, riders: Sequence[Rider]) -> str:
    """One statement: ``fence_sql`` (returning the session's ``id`` when it lets the
    write through), then each rider; it answers how many rows the fence returned."""
    parts = [f"fence AS ({fence_sql})"]
    parts += [f"r{number} AS ({rider.sql})" for number, rider in enumerate(riders)]
    return f"WITH {', '.join(parts)} SELECT count(*) FROM fence"


def fenced_params(fence_params: Sequence[Any], riders: Sequence[Rider]) -> list[Any]:
    """The parameters of :func:`fenced`'s statement, in order."""
    return [*fence_params, *(param for rider in riders for param in rider.params)]


def _write(
    connection: Connection,
    fence_sql: str,
    fence_params: Sequence[Any],
    rows: Sequence[tuple[int, str]],
    also: Sequence[Rider],
) -> bool:
    """Run the fence and the inserts as one statement; whether the fence let them
    through (committed) or refused (nothing written). Raises ``psycopg.Error`` when
    the statement failed: then nothing was written, unless the answer alone was lost
    (the caller looks at the session's row)."""
    events = Rider(_EVENTS.sql, ([seq for seq, _ in rows], [event for _, event in rows]))
    riders = [events, *also]
    found = connection.execute(
        fenced(fence_sql, riders).encode(), fenced_params(fence_params, riders)
    ).fetchone()
    return bool(found and found[0])


def create(
    connection: Connection,
    header: SessionHeader,
    rows: Sequence[tuple[int, str]],
    *,
    token: int,
    owner: str,
    where: str,
    also: Sequence[Rider] = (),
) -> Fence:
    """Store a new session with its first events, owned by ``token`` at epoch 1; the
    riders ``also`` (the search index's) write in the same statement."""
    created = (header.id, header.created_at, header.model_dump_json(), len(rows), token, owner)
    try:
        if _write(connection, _CREATE, created, rows, also):
            return Fence(epoch=1, head=len(rows))
        error = None
    except psycopg.Error as failure:
        error = failure
    if _already_written(connection, header.id, Fence(epoch=1, head=0), rows, token=token):
        return Fence(epoch=1, head=len(rows))
    if error is not None and connection.execute(_CURRENT, (header.id,)).fetchone() is None:
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
    also: Sequence[Rider] = (),
) -> Fence:
    """Append events at ``fence.head``, or raise :class:`SessionConflictError` (nothing
    written) when another writer claimed the session since; the riders ``also``
    write in the same statement."""
    advance = (len(rows), session_id, fence.epoch, fence.head)
    try:
        if _write(connection, _ADVANCE, advance, rows, also):
            return Fence(fence.epoch, fence.head + len(rows))
        error = None
    except psycopg.Error as failure:
        error = failure
    if _already_written(connection, session_id, fence, rows):
        return Fence(fence.epoch, fence.head + len(rows))
    if error is not None:
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
    "Rider",
    "append",
    "claim",
    "create",
    "delete",
    "fenced",
    "fenced_params",
    "release",
    "retake_token",
    "take_token",
]
