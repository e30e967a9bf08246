"""In-memory store, for tests: same contract as the durable stores, no files.

Events are frozen values, so the store keeps the very event objects it was given; a
load builds a new session over them (validated and repaired like any other load).
"""

from __future__ import annotations

from dsh_session._header import SessionHeader, SessionId
from dsh_session.errors import SessionNotFoundError, StoreError
from dsh_session.events import LogEvent
from dsh_session.stores._base import Batch, SessionStore
from dsh_session.stores._recovery import StoredLog


class MemorySessionStore(SessionStore):
    """Sessions kept in this object; they live as long as it does."""

    _blocking_io = False

    def __init__(self) -> None:
        super().__init__()
        self._logs: dict[SessionId, tuple[SessionHeader, list[LogEvent]]] = {}
        self._blobs: dict[str, bytes] = {}
        """Attachment bytes by hex SHA-256."""

    def __repr__(self) -> str:
        return f"MemorySessionStore(<{len(self._logs)} session(s)>)"

    def _write_batch(self, batch: Batch) -> None:
        if batch.header is not None:
            if batch.session_id in self._logs:
                raise StoreError(
                    f"session {batch.session_id!r} already exists in {self}; load it instead "
                    "of attaching a new session with the same id"
                )
            self._logs[batch.session_id] = (batch.header, [])
        self._logs[batch.session_id][1].extend(batch.events)

    def _put_blob(self, sha256: str, data: bytes) -> None:
        self._blobs[sha256] = data

    def _get_blob(self, sha256: str) -> bytes | None:
        return self._blobs.get(sha256)

    def _read_log(self, session_id: SessionId) -> StoredLog:
        try:
            header, events = self._logs[session_id]
        except KeyError:
            raise SessionNotFoundError(session_id, repr(self)) from None
        return StoredLog(header, list(events))

    def _delete_log(self, session_id: SessionId) -> None:
        if self._logs.pop(session_id, None) is None:
            raise SessionNotFoundError(session_id, repr(self))

    def _read_headers(self) -> list[SessionHeader]:
        return [header for header, _ in self._logs.values()]

    def _release(self) -> None:
        """Nothing to release: the sessions stay readable until the object is gone."""


__all__ = [
    "MemorySessionStore",
]
