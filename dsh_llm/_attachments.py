"""Making attachment references from bytes, and reading their bytes back when a request
is built.

A message holds only an :class:`AttachmentRef`; the bytes are in a session store. An
adapter that sends an attachment asks the reader in effect (``reading_attachments``:
the agent loop puts its store there around each model call) and checks that the bytes
hash to the reference before they leave the process.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from dsh_llm._attachment_ref import (
    IMAGE_MEDIA_TYPES,
    AttachmentId,
    AttachmentRef,
    attachment_id_of,
)
from dsh_llm._content import ContentBlock, FileBlock, ImageBlock, ToolResultBlock
from dsh_llm._failure import LlmFailure
from dsh_llm._image_probe import probe_image
from dsh_llm._messages import Message
from dsh_llm.errors import AttachmentUnavailableError
from dsh_llm.failure_codes import ATTACHMENT_CORRUPT, ATTACHMENT_NOT_FOUND


class AttachmentReader(Protocol):
    """Where an adapter gets an attachment's bytes: every ``SessionStore`` is one."""

    async def read_attachment(self, ref: AttachmentRef) -> bytes:
        """The bytes ``ref`` names; raise when there are none."""
        ...


_reader: ContextVar[AttachmentReader | None] = ContextVar("dsh_attachment_reader", default=None)


@contextmanager
def reading_attachments(reader: AttachmentReader) -> Iterator[None]:
    """Within this block (and the tasks it starts) adapters read attachment bytes from
    ``reader``. The agent loop does this with its store; call it yourself around
    ``adapter.stream(request)`` when you send a request by hand."""
    token = _reader.set(reader)
    try:
        yield
    finally:
        _reader.reset(token)


def attachment_ref(data: bytes, *, media_type: str, name: str | None = None) -> AttachmentRef:
    """The reference to ``data``: its hash, size and, for an image, the format and size
    its header declares (which must agree with ``media_type``). ``name`` keeps only its
    last path segment, without control characters. Raises ``ValueError``."""
    if not data:
        raise ValueError("an attachment cannot be empty")
    width = height = None
    if media_type in IMAGE_MEDIA_TYPES:
        facts = probe_image(data)
        if facts is None:
            raise ValueError(f"the bytes are not a readable {media_type} image")
        if facts.media_type != media_type:
            raise ValueError(f"the bytes are a {facts.media_type} image, not {media_type}")
        width, height = facts.width, facts.height
    return AttachmentRef(
        attachment_id=attachment_id_of(data),
        media_type=media_type,
        size=len(data),
        width=width,
        height=height,
        name=display_name(name),
    )


def display_name(name: str | None) -> str | None:
    """A name fit for a log: the last segment of a path of either separator style,
    without control characters, at most 255 characters; ``None`` when nothing is left."""
    if name is None:
        return None
    leaf = name[max(name.rfind("/"), name.rfind("\\")) + 1 :]
    clean = "".join(ch for ch in leaf if ch >= " " and ch != "\x7f").strip()[:255]
    return clean or None


def content_attachments(content: Iterable[ContentBlock]) -> Iterator[AttachmentRef]:
    """The attachment references in ``content``, tool-result blocks included, in order."""
    for block in content:
        if isinstance(block, FileBlock):
            yield block.attachment
        elif isinstance(block, ImageBlock):
            if block.attachment is not None:
                yield block.attachment
        elif isinstance(block, ToolResultBlock):
            yield from content_attachments(block.content)


async def read_request_attachments(
    messages: Iterable[Message],
) -> Mapping[AttachmentId, bytes]:
    """The bytes of every attachment the messages hold, each read once from the reader
    in effect and checked against its reference. Raises
    :class:`~dsh_llm.errors.AttachmentUnavailableError` naming the message."""
    found: dict[AttachmentId, bytes] = {}
    for message in messages:
        for ref in content_attachments(message.content):
            if ref.attachment_id not in found:
                found[ref.attachment_id] = await _read(ref, message.id)
    return found


async def _read(ref: AttachmentRef, message_id: str) -> bytes:
    reader = _reader.get()
    where = f"attachment {ref.attachment_id} of message {message_id!r}"
    if reader is None:
        raise _unavailable(
            f"{where}: no attachment reader is in effect (use reading_attachments(store))",
            ref,
            message_id,
            ATTACHMENT_NOT_FOUND,
        )
    try:
        data = await reader.read_attachment(ref)
    except Exception as error:
        # A store's errors carry the harness's code (ATTACHMENT_CORRUPT, ...).
        code = getattr(error, "code", None)
        code = code if isinstance(code, str) else ATTACHMENT_NOT_FOUND
        raise _unavailable(f"{where}: {error}", ref, message_id, code) from error
    if not ref.matches(data):
        raise _unavailable(
            f"{where}: the stored bytes do not hash to the reference",
            ref,
            message_id,
            ATTACHMENT_CORRUPT,
        )
    return data


def _unavailable(
    text: str, ref: AttachmentRef, message_id: str, code: str
) -> AttachmentUnavailableError:
    return AttachmentUnavailableError(
        text,
        message_id=message_id,
        attachment_id=ref.attachment_id,
        failure=LlmFailure(message=text, code=code),
    )


__all__ = [
    "AttachmentReader",
    "attachment_ref",
    "content_attachments",
    "display_name",
    "read_request_attachments",
    "reading_attachments",
]
