"""Attachments in each provider's form: the bytes, read from the store when the request
is built, go on the wire as base64 (never into the log). A media type a wire format
cannot carry is refused with ``UNSUPPORTED_CONTENT`` naming the message and the type.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from dsh_llm._attachment_ref import AttachmentId, AttachmentRef
from dsh_llm._failure import LlmFailure
from dsh_llm.errors import LlmError
from dsh_llm.failure_codes import UNSUPPORTED_CONTENT

AttachmentBytes = Mapping[AttachmentId, bytes]
"""The bytes of a request's attachments, by id (``read_request_attachments``)."""

DEFAULT_FILE_NAME = "attachment"
"""The file name sent for a file attached without one."""


class _UnsupportedAttachmentError(LlmError):
    """A wire format cannot carry an attachment of this media type."""


def unsupported_attachment(
    api: str, message_id: str, ref: AttachmentRef, where: str
) -> _UnsupportedAttachmentError:
    """The error for an attachment ``api`` cannot carry in ``where``."""
    text = (
        f"message {message_id!r}: {api} cannot carry an attachment of media type "
        f"{ref.media_type!r} ({ref.attachment_id}) in {where}"
    )
    return _UnsupportedAttachmentError(
        text, failure=LlmFailure(message=text, code=UNSUPPORTED_CONTENT)
    )


def base64_of(ref: AttachmentRef, attachments: AttachmentBytes) -> str:
    """The attachment's bytes as base64 text."""
    return base64.b64encode(attachments[ref.attachment_id]).decode("ascii")


def data_url(ref: AttachmentRef, attachments: AttachmentBytes) -> str:
    """``data:<media type>;base64,<bytes>``."""
    return f"data:{ref.media_type};base64,{base64_of(ref, attachments)}"


def text_of(ref: AttachmentRef, attachments: AttachmentBytes) -> str | None:
    """The attachment as text when it is a UTF-8 ``text/*`` file, else ``None``."""
    if not ref.media_type.startswith("text/"):
        return None
    try:
        return attachments[ref.attachment_id].decode("utf-8")
    except UnicodeDecodeError:
        return None


def file_name(ref: AttachmentRef) -> str:
    """The name to send with a file."""
    return ref.name or DEFAULT_FILE_NAME


WirePart = dict[str, Any]

__all__ = [
    "DEFAULT_FILE_NAME",
    "AttachmentBytes",
    "WirePart",
    "base64_of",
    "data_url",
    "file_name",
    "text_of",
    "unsupported_attachment",
]
