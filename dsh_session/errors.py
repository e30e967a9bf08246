"""Error types of dsh_session, rooted at :class:`dsh_llm.DshError`.

Each error carries the seq / field / event type it is about, so a caller can point at
the offending event without parsing the message. Every public exception of dsh_session
is defined here::

    dsh_llm.DshError
        SessionError
            SessionValidationError
            SessionFormatError
                HarnessSchemaError
            SessionCorruptError
                HarnessCorruptError
                    ZstdFrameError
                    HeaderLineError
                    ChunkRowError
                    LegacyRecordError
                    SourceSeqsError
                    HarnessLayoutError
            StoreError
                SessionConflictError
                SessionNotFoundError
                AmbiguousSessionIdError
                StoreNotFoundError
                NotARegularFileError
                StoreUrlError
                DeliveryConflictError
            SearchQueryError
            PostgresUnavailableError (also RuntimeError)
            AttachmentError
                AttachmentNotFoundError
                AttachmentCorruptError
                AttachmentRefusedError (also ValueError)

The ``Harness*`` errors and their subclasses come from the codecs of the TypeScript
harness's formats: each is a :class:`SessionCorruptError` (the bytes are damaged or not
the harness's) or a :class:`SessionFormatError` (a format this reader does not read), so
a store that plugs these codecs in surfaces them unchanged; each carries the byte
offset, seq or field it is about.
"""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING

from dsh_llm.errors import DshError

if TYPE_CHECKING:
    from pathlib import Path


__all__ = [
    "AmbiguousSessionIdError",
    "AttachmentCorruptError",
    "AttachmentError",
    "AttachmentNotFoundError",
    "AttachmentRefusedError",
    "ChunkRowError",
    "DeliveryConflictError",
    "HarnessCorruptError",
    "HarnessLayoutError",
    "HarnessSchemaError",
    "HeaderLineError",
    "LegacyRecordError",
    "NotARegularFileError",
    "PostgresUnavailableError",
    "SearchQueryError",
    "SessionConflictError",
    "SessionCorruptError",
    "SessionError",
    "SessionFormatError",
    "SessionNotFoundError",
    "SessionValidationError",
    "SourceSeqsError",
    "StoreError",
    "StoreNotFoundError",
    "StoreUrlError",
    "ZstdFrameError",
]


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


class HarnessCorruptError(SessionCorruptError):
    """Bytes written in a harness format are damaged. ``offset`` is the byte offset in
    the artifact (file bytes for zstd, plaintext bytes for JSONL) when known."""

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        seq: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message, seq=seq, field=field)
        self.offset = offset


class ZstdFrameError(HarnessCorruptError):
    """A complete zstd frame is malformed or fails its checksum (``offset`` = frame start)."""


class HeaderLineError(HarnessCorruptError):
    """The first record is not a well-formed harness session header (``field`` names it)."""


class ChunkRowError(HarnessCorruptError):
    """A packed ``*-chunks`` storage row is malformed (``seq`` = its ``seq0``)."""


class LegacyRecordError(HarnessCorruptError):
    """A pre-identity record looks legacy but does not have the exact legacy shape."""


class SourceSeqsError(HarnessCorruptError):
    """A varint/ZigZag ``source_event_seqs`` BLOB is truncated, non-canonical or out of range."""


class HarnessLayoutError(HarnessCorruptError):
    """A store root breaks the harness folder layout (flat files, mixed encodings,
    a path that does not decode to an id)."""


class HarnessSchemaError(SessionFormatError):
    """A SQLite database is not a harness schema-17 database (version, application id or
    table shape differ)."""


class SessionNotFoundError(StoreError):
    """The store holds no session with the requested id."""

    def __init__(self, session_id: str, where: str) -> None:
        super().__init__(f"no session {session_id!r} in {where}")
        self.session_id = session_id


class AmbiguousSessionIdError(StoreError):
    """An id prefix given to :meth:`SessionStore.resolve_session_id` is the start of
    several stored ids. ``given`` is the prefix, ``candidates`` the ids it could mean
    (oldest first)."""

    def __init__(self, given: str, candidates: tuple[str, ...], where: str) -> None:
        shown = ", ".join(candidates[:3]) + (", …" if len(candidates) > 3 else "")
        super().__init__(
            f"{given!r} is the start of {len(candidates)} session ids in {where} ({shown}); "
            "give more of it"
        )
        self.given = given
        self.candidates = candidates


class StoreNotFoundError(StoreError):
    """A store opened with ``mode="open"`` or ``"read"`` does not exist at ``location``
    (or is not a store of that backend); nothing was created."""

    def __init__(self, location: str, problem: str) -> None:
        super().__init__(f"no session store at {location}: {problem}")
        self.location = location


class NotARegularFileError(StoreError):
    """A store file's name is taken by something that is not a regular file."""

    def __init__(self, path: Path, mode: int) -> None:
        super().__init__(f"{path}: not a regular file ({_kind(mode)}); not opened")
        self.path = path


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


class StoreUrlError(StoreError):
    """A store URL that cannot name a store; ``url`` is the text given."""

    def __init__(self, url: str, problem: str) -> None:
        super().__init__(f"store url {url!r}: {problem}")
        self.url = url


class DeliveryConflictError(StoreError):
    """A delivery reuses the id of an earlier one with different content (a client
    minted one message id twice); nothing was written. Names both."""

    def __init__(self, session_id: str, delivery_id: str, stored: str, given: str) -> None:
        super().__init__(
            f"session {session_id!r} already received delivery {delivery_id!r} with other "
            f"content: stored {stored}, given {given}; nothing was written"
        )
        self.session_id = session_id
        self.delivery_id = delivery_id
        self.stored = stored
        self.given = given


class SearchQueryError(SessionError):
    """A search query that cannot be parsed (``store.search``). ``query`` is the text
    given, ``position`` the character offset of the problem, when there is one."""

    def __init__(self, query: str, problem: str, *, position: int | None = None) -> None:
        at = "" if position is None else f" at character {position}"
        super().__init__(f"search query {query!r}{at}: {problem}")
        self.query = query
        self.position = position


class PostgresUnavailableError(SessionError, RuntimeError):
    """No PostgreSQL binaries were found on this machine."""


class AttachmentError(SessionError):
    """An attachment's bytes are refused, missing or damaged. ``attachment_id`` names
    the attachment (``sha256:<hex>``), ``message_id`` the message that holds it, when
    there is one; ``code`` is the harness's code for the failure."""

    code = "ATTACHMENT_READ_FAILED"

    def __init__(
        self, message: str, *, attachment_id: str | None, message_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.attachment_id = attachment_id
        self.message_id = message_id


class AttachmentNotFoundError(AttachmentError):
    """The store has no bytes for an attachment a message holds: found when a log is
    loaded or read (the message named), when a batch citing it is flushed (nothing of
    the batch is written), or when its bytes are read."""

    code = "ATTACHMENT_NOT_FOUND"


class AttachmentCorruptError(AttachmentError):
    """The stored bytes of an attachment do not hash to its reference."""

    code = "ATTACHMENT_CORRUPT"


class AttachmentRefusedError(AttachmentError, ValueError):
    """Bytes offered as an attachment break the store's limits (too large, a media type
    not allowed) or do not match their media type; nothing was stored."""

    code = "ATTACHMENT_REFUSED"
