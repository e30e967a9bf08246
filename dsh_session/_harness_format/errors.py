"""Errors of the harness-format codecs.

Every error is a :class:`dsh_session.errors.SessionCorruptError` (the bytes are damaged
or not the harness's) or :class:`dsh_session.errors.SessionFormatError` (a format this
reader does not read), so a store that plugs these codecs in surfaces them unchanged.
Each carries the byte offset, seq or field it is about.
"""

from __future__ import annotations

from dsh_session.errors import SessionCorruptError, SessionFormatError


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


class HarnessSchemaError(SessionFormatError):
    """A SQLite database is not a harness schema-17 database (version, application id or
    table shape differ)."""


class HarnessLayoutError(HarnessCorruptError):
    """A store root breaks the harness folder layout (flat files, mixed encodings,
    a path that does not decode to an id)."""
