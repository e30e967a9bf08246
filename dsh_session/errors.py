"""Error types of dsh_session, rooted at :class:`dsh_llm.DshError`.

Each error carries the seq / field / event type it is about, so a caller can point at
the offending event without parsing the message.
"""

from __future__ import annotations

from dsh_llm.errors import DshError


class SessionError(DshError):
    """Root of every error dsh_session raises on purpose."""


class SessionValidationError(SessionError):
    """An append (or a value given to the session API) was rejected; nothing was
    committed. ``seq`` is the seq the event would have had or the one it cites,
    ``field`` the wire field at fault, when known."""

    def __init__(self, message: str, *, seq: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.seq = seq
        self.field = field


class SessionFormatError(SessionError):
    """A log this version cannot read: an unsupported format version, or an unknown
    event type that is not marked ``ignorable``. Distinct from corruption: the log
    may be perfectly fine for a newer reader."""

    def __init__(
        self, message: str, *, event_type: str | None = None, seq: int | None = None
    ) -> None:
        super().__init__(message)
        self.event_type = event_type
        self.seq = seq


class SessionCorruptError(SessionError):
    """A stored log is damaged: a seq gap, a malformed event, a broken turn/step
    enclosure or an unpaired tool result. ``seq`` names the first bad event."""

    def __init__(self, message: str, *, seq: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.seq = seq
        self.field = field


class StoreError(SessionError):
    """A persistence failure: a write or read failed, or the store refused the call
    (e.g. loading an id that the same store still has attached)."""


class SessionConflictError(StoreError):
    """Another writer owns the session: a second store object or process tried to
    attach or load it, or a newer writer took it over. Nothing of this writer's call
    was written. ``session_id`` names the session, ``holder`` what owns it, when known
    (e.g. ``pid 4711 on build-3``)."""

    def __init__(self, message: str, *, session_id: str, holder: str | None = None) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.holder = holder
