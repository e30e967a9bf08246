"""The session header: the facts about a log that live outside its event sequence.

A :data:`SessionId` names files (``<dir>/<id>.jsonl``), so it is restricted to
``[A-Za-z0-9._-]``, at most 128 characters, and never ``.`` or ``..``. Minted ids are
UUIDv7 strings, so sessions sort by creation time.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Annotated, Any, Literal, NewType

from pydantic import AfterValidator, Field, ValidationError
from pydantic_core import from_json

from dsh_llm._ids import new_uuid7
from dsh_llm._json_limits import JSON_INT_MAX
from dsh_llm._model import optional
from dsh_llm._open_model import OpenDshModel
from dsh_session.errors import SessionCorruptError, SessionFormatError, SessionValidationError

SessionId = NewType("SessionId", str)
"""Identity of a session; safe to use as a file name."""

MAX_SESSION_ID_LENGTH = 128
FORMAT_VERSION: Literal[0] = 0
"""The only log format version this package reads and writes."""

_SESSION_ID_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"
_SESSION_ID = re.compile(_SESSION_ID_PATTERN)


def _session_id_problem(value: str) -> str | None:
    if not _SESSION_ID.fullmatch(value):
        return (
            f"session id {value[:140]!r} must be 1-{MAX_SESSION_ID_LENGTH} characters "
            "of [A-Za-z0-9._-]"
        )
    if value in (".", ".."):
        return f"session id {value!r} is not a usable file name"
    return None


def _check_session_id(value: str) -> SessionId:
    problem = _session_id_problem(value)
    if problem:
        raise ValueError(problem)
    return SessionId(value)


SessionIdField = Annotated[
    SessionId,
    AfterValidator(_check_session_id),
    Field(json_schema_extra={"pattern": _SESSION_ID_PATTERN, "not": {"enum": [".", ".."]}}),
]
"""Pydantic field type of a :data:`SessionId`."""


def validate_session_id(value: object) -> SessionId:
    """Return ``value`` as a :data:`SessionId`, or raise :class:`SessionValidationError`
    (field ``id``) when it could not safely name a file."""
    if not isinstance(value, str):
        raise SessionValidationError(
            f"session id must be a string, not {type(value).__name__}", field="id"
        )
    problem = _session_id_problem(value)
    if problem:
        raise SessionValidationError(problem, field="id")
    return SessionId(value)


def new_session_id() -> SessionId:
    """Mint a new session id (a UUIDv7 string, time-ordered)."""
    return SessionId(new_uuid7())


def now_ms() -> int:
    """The current time in epoch milliseconds, as stored in headers and events."""
    return time.time_ns() // 1_000_000


class SessionHeader(OpenDshModel):
    """Facts about a session kept beside its events. Unknown fields written by other
    harnesses (e.g. ``origin``) are kept, deep-frozen, so a header round-trips."""

    version: Literal[0] = FORMAT_VERSION
    """Log format version; only 0 exists."""
    id: SessionIdField
    """The session's identity (also its file name in a JSONL store)."""
    created_at: int = Field(ge=0, le=JSON_INT_MAX)
    """Creation time in epoch milliseconds."""
    cwd: str | None = optional()
    """The working directory the session was started in, when recorded."""
    parent_session: SessionIdField | None = optional()
    """The session this one was forked from."""
    seed_length: int | None = optional(ge=0, le=JSON_INT_MAX)
    """How many events were seeded from elsewhere (a fork's prefix or a resumed log),
    not counting the ``session/end-seed`` marker."""


def parse_header(raw: str | bytes | Mapping[str, Any]) -> SessionHeader:
    """Validate a stored header (JSON text or a mapping; a JSONL ``"type": "session"``
    tag is accepted and dropped). An unsupported ``version`` raises
    :class:`SessionFormatError`; anything else malformed raises :class:`SessionCorruptError`."""
    try:
        value = from_json(raw) if isinstance(raw, (str, bytes)) else raw
    except ValueError as error:
        raise SessionCorruptError(f"session header is not JSON: {error}", field="header") from error
    if not isinstance(value, Mapping):
        raise SessionCorruptError("session header is not a JSON object", field="header")
    fields = {key: item for key, item in value.items() if key != "type"}
    if value.get("type", "session") != "session":
        raise SessionCorruptError(
            f"session header has type {value.get('type')!r}, expected 'session'", field="type"
        )
    version = fields.get("version")
    if version != FORMAT_VERSION:
        raise SessionFormatError(_version_problem(version))
    try:
        return SessionHeader.model_validate(fields)
    except ValidationError as error:
        raise SessionCorruptError(f"invalid session header: {error}", field="header") from error


def _version_problem(version: object) -> str:
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        return (
            f"session format version {version} was written by a newer harness; "
            "upgrade dsh to read it"
        )
    return f"session format version {version!r} is not supported and has no upgrade path"


__all__ = [
    "FORMAT_VERSION",
    "MAX_SESSION_ID_LENGTH",
    "SessionHeader",
    "SessionId",
    "SessionIdField",
    "new_session_id",
    "now_ms",
    "parse_header",
    "validate_session_id",
]
