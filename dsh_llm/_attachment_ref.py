"""Attachments as identified values: a content-addressed reference to bytes that a
session store keeps once, instead of base64 repeated in every event.

The shape is the TypeScript harness's ``ImageAttachmentRef`` (package
``@deepseek-ai/dsh-attachment``): ``{attachmentId: "sha256:<hex>", mediaType, bytes,
width?, height?, name?}``, so a log carrying one travels both ways.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, NewType

from pydantic import Field

from dsh_llm._json_limits import JSON_INT_MAX
from dsh_llm._model import DshModel, optional

AttachmentId = NewType("AttachmentId", str)
"""``sha256:`` and the lowercase hex SHA-256 of the bytes: the content is the identity."""

AttachmentIdField = Annotated[AttachmentId, Field(pattern=r"^sha256:[0-9a-f]{64}$")]

ATTACHMENT_ID_PREFIX = "sha256:"

_MEDIA_TYPE = r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$"
"""``type/subtype`` in RFC 6838's characters: nothing a terminal or a path could act on."""

IMAGE_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
"""The raster formats an image attachment may have (the harness's version one)."""


def attachment_id_of(data: bytes) -> AttachmentId:
    """The id of these bytes: ``sha256:<hex digest>``."""
    return AttachmentId(ATTACHMENT_ID_PREFIX + hashlib.sha256(data).hexdigest())


class AttachmentRef(DshModel):
    """What a message holds of an attachment: its hash, media type, size and name. The
    bytes live once in the session store; adapters read them when they build a request."""

    attachment_id: AttachmentIdField
    """``sha256:<hex>`` of the bytes."""
    media_type: str = Field(max_length=255, pattern=_MEDIA_TYPE)
    """MIME type, e.g. ``image/png`` or ``application/pdf`` (no parameters)."""
    size: int = Field(alias="bytes", ge=1, le=JSON_INT_MAX)
    """Exact length of the bytes (``bytes`` on the wire)."""
    width: int | None = optional(ge=1, le=JSON_INT_MAX)
    """Intrinsic width in pixels (images; always set for an image block)."""
    height: int | None = optional(ge=1, le=JSON_INT_MAX)
    """Intrinsic height in pixels (images; always set for an image block)."""
    name: str | None = optional(min_length=1, max_length=255)
    """Display name, never a path."""

    @property
    def sha256(self) -> str:
        """The hex digest alone (what store layouts are keyed by)."""
        return self.attachment_id.removeprefix(ATTACHMENT_ID_PREFIX)

    def matches(self, data: bytes) -> bool:
        """Whether ``data`` are the bytes this reference names (length and hash)."""
        return len(data) == self.size and attachment_id_of(data) == self.attachment_id


__all__ = [
    "ATTACHMENT_ID_PREFIX",
    "IMAGE_MEDIA_TYPES",
    "AttachmentId",
    "AttachmentIdField",
    "AttachmentRef",
    "attachment_id_of",
]
