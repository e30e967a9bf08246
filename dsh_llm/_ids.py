"""Message and call identifiers, and the minting of new message ids.

Minted ids are RFC 9562 UUIDv7 strings from ``uuid_utils`` (a Rust implementation
of the counter method): time-ordered, strictly increasing within a process, unique
across threads, and never ahead of the clock under bursts. The measurements behind
the choice are in docs/decisions/2026-12-02-uuidv7-generator.md.
"""

from __future__ import annotations

from typing import Annotated, NewType

import uuid_utils
from pydantic import StringConstraints

MessageId = NewType("MessageId", str)
"""Opaque identity of a message; shared by user, assistant and tool-result messages."""

CallId = NewType("CallId", str)
"""Provider-issued tool-call id, opaque like :data:`MessageId`."""

MAX_ID_LENGTH = 256
# What an imported id may be: non-empty, at most 256 characters, no control characters.
ID_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]+$"

MessageIdField = Annotated[
    MessageId, StringConstraints(min_length=1, max_length=MAX_ID_LENGTH, pattern=ID_PATTERN)
]
CallIdField = Annotated[
    CallId, StringConstraints(min_length=1, max_length=MAX_ID_LENGTH, pattern=ID_PATTERN)
]

_uuid7 = uuid_utils.uuid7


def new_uuid7() -> str:
    """A fresh UUIDv7 string."""
    return str(_uuid7())


def new_message_id() -> MessageId:
    """Mint a new :data:`MessageId` (a UUIDv7 string)."""
    return MessageId(str(_uuid7()))


__all__ = [
    "ID_PATTERN",
    "MAX_ID_LENGTH",
    "CallId",
    "CallIdField",
    "MessageId",
    "MessageIdField",
    "new_message_id",
    "new_uuid7",
]
