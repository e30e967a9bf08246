"""A user message with attachments, from bytes or files, in one call.

The bytes go to the store first (``store.save_attachment``: durable, once per hash);
only then is the message created around their references, so no message, and so no
event, can name bytes the store does not hold.
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dsh_llm._attachment_ref import IMAGE_MEDIA_TYPES
from dsh_llm._content import ContentBlock, FileBlock, ImageBlock, TextBlock
from dsh_llm._create import create_user_message
from dsh_llm._image_probe import probe_image
from dsh_llm._messages import UserMessage
from dsh_session.errors import AttachmentRefusedError

if TYPE_CHECKING:
    from dsh_session.stores._base import SessionStore


@dataclass(frozen=True)
class Attachment:
    """Bytes to attach, with their media type and an optional display name."""

    data: bytes
    media_type: str
    name: str | None = None


async def create_user_message_with_attachments(
    store: SessionStore,
    text: str | None = None,
    *,
    attachments: Sequence[Attachment | str | os.PathLike[str]],
) -> UserMessage:
    """A new user message: ``text`` (if any) then one block per attachment, in order —
    an :class:`~dsh_llm.ImageBlock` for a PNG, JPEG, WebP or GIF, a
    :class:`~dsh_llm.FileBlock` for anything else. A path is read, named by its file
    name and typed by its bytes (images) or its suffix. Every attachment is saved in
    ``store`` before the message exists. Raises
    :class:`~dsh_session.errors.AttachmentRefusedError` (nothing of the message is
    created; attachments saved before the refused one stay stored, unreferenced)."""
    given = [_attachment(item) for item in attachments]
    content: list[ContentBlock] = [TextBlock(text=text)] if text else []
    for item in given:
        ref = await store.save_attachment(item.data, media_type=item.media_type, name=item.name)
        if ref.media_type in IMAGE_MEDIA_TYPES:
            content.append(ImageBlock(attachment=ref))
        else:
            content.append(FileBlock(attachment=ref))
    return create_user_message(content)


def _attachment(item: Attachment | str | os.PathLike[str]) -> Attachment:
    if isinstance(item, Attachment):
        return item
    path = Path(item)
    data = path.read_bytes()
    facts = probe_image(data)
    media_type = facts.media_type if facts is not None else mimetypes.guess_type(path.name)[0]
    if media_type is None:
        raise AttachmentRefusedError(
            f"cannot tell the media type of {path.name!r}: pass Attachment(data, media_type)",
            attachment_id=None,
        )
    return Attachment(data=data, media_type=media_type, name=path.name)


__all__ = ["Attachment", "create_user_message_with_attachments"]
