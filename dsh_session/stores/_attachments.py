"""What every store does with attachments, whatever keeps their bytes.

- **Saving** checks the bytes against the store's :class:`AttachmentLimits`, builds the
  reference (hash, media type, size, image size, name) and makes the bytes durable
  before returning it, so a message holding the reference can only be created after
  its bytes are safe.
- **Flushing** refuses a batch that cites an attachment the store does not hold
  (``AttachmentNotFoundError``; nothing of the batch is written and it stays queued):
  no event ever references bytes that are not durable.
- **Loading and reading** check that every attachment of the log is stored and hashes
  to its reference, naming the message that holds it when not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import attrgetter, is_
from typing import Any, Protocol

from dsh_llm._attachment_ref import IMAGE_MEDIA_TYPES, AttachmentRef
from dsh_llm._attachments import attachment_ref, content_attachments
from dsh_llm._content import ToolResultBlock
from dsh_llm._messages import Message
from dsh_session._events.classes import (
    AssistantMessageEvent,
    InboxSplicedEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from dsh_session._events.log_event import UnknownEvent
from dsh_session._events.table import EVENT_CLASSES
from dsh_session._surface import BLOCKS_WITHOUT_ATTACHMENTS
from dsh_session.errors import (
    AttachmentCorruptError,
    AttachmentNotFoundError,
    AttachmentRefusedError,
)
from dsh_session.events import LogEvent


class BlobHolder(Protocol):
    """The part of a store these checks use (``SessionStore`` is one)."""

    _stored_blobs: set[str]

    def _get_blob(self, sha256: str) -> bytes | None: ...

    def _has_blob(self, sha256: str) -> bool: ...


DEFAULT_MAX_BYTES = 20 * 1024 * 1024
"""20 MiB: the largest image OpenAI and Anthropic take inline is about this size."""

DEFAULT_MEDIA_TYPES = IMAGE_MEDIA_TYPES | {"application/pdf", "text/plain"}
"""The harness's four image formats, plus what both providers take as a document."""


@dataclass(frozen=True)
class AttachmentLimits:
    """What a store accepts as an attachment: at most ``max_bytes`` bytes, of one of
    ``media_types``. Set ``store.attachment_limits`` to change them. They apply when
    bytes are saved, never when a log is read: lowering them leaves stored history
    readable."""

    max_bytes: int = DEFAULT_MAX_BYTES
    """Largest attachment accepted, in bytes."""
    media_types: frozenset[str] = field(default=DEFAULT_MEDIA_TYPES)
    """MIME types accepted."""

    def __post_init__(self) -> None:
        if self.max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, not {self.max_bytes}")
        object.__setattr__(self, "media_types", frozenset(self.media_types))


def checked_ref(
    data: bytes, media_type: str, name: str | None, limits: AttachmentLimits
) -> AttachmentRef:
    """The reference to ``data``, or :class:`AttachmentRefusedError` saying which limit
    or check it breaks."""
    if media_type not in limits.media_types:
        raise AttachmentRefusedError(
            f"media type {media_type!r} is not accepted as an attachment "
            f"(accepted: {', '.join(sorted(limits.media_types))})",
            attachment_id=None,
        )
    if len(data) > limits.max_bytes:
        raise AttachmentRefusedError(
            f"the attachment is {len(data)} bytes, more than the limit of {limits.max_bytes}",
            attachment_id=None,
        )
    try:
        return attachment_ref(data, media_type=media_type, name=name)
    except ValueError as error:
        raise AttachmentRefusedError(str(error), attachment_id=None) from None


def message_attachments(events: Iterable[LogEvent]) -> Iterator[tuple[Message, AttachmentRef]]:
    """Every attachment the events' messages hold, with its message.

    Every load scans its whole log here, and nearly every log holds no attachment:
    that is first shown in C, over the classes of the events and of their messages'
    blocks (walking the events in Python cost 6-8% of a load); only a log that may
    hold one is walked message by message."""
    log = events if isinstance(events, list | tuple) else list(events)  # read twice
    return iter(()) if _free_of_attachments(log) else _walk(log)


def _walk(events: Iterable[LogEvent]) -> Iterator[tuple[Message, AttachmentRef]]:
    for event in events:
        messages: Iterable[Message]
        if isinstance(event, UserMessageEvent):
            messages = (event.data,)
        elif isinstance(event, AssistantMessageEvent | ToolResultEvent):
            messages = (event.data.message,)
        elif isinstance(event, InboxSplicedEvent):
            messages = event.data.inserted
        else:
            continue
        for message in messages:
            for ref in content_attachments(message.content):
                yield message, ref


_CONTENT_OF: dict[type[LogEvent], Callable[[Any], tuple[object, ...]]] = {
    UserMessageEvent: attrgetter("data.content"),
    AssistantMessageEvent: attrgetter("data.message.content"),
    ToolResultEvent: attrgetter("data.message.content"),
}
"""The classes of events holding one message, exactly, and how to reach its content."""
_EVENT_CLASSES: tuple[type, ...] = (*EVENT_CLASSES.values(), UnknownEvent)
_ANSWERED = frozenset(
    cls
    for cls in _EVENT_CLASSES
    if cls in _CONTENT_OF
    or (
        not issubclass(cls, UserMessageEvent | AssistantMessageEvent | ToolResultEvent)
        and not issubclass(cls, InboxSplicedEvent)
    )
)
"""Event classes :func:`_free_of_attachments` can answer for: those holding no message
and those of :data:`_CONTENT_OF` (exact classes: a subclass is walked)."""
_WITHOUT_ATTACHMENTS = BLOCKS_WITHOUT_ATTACHMENTS
_BLOCK_CONTENT = attrgetter("content")


def _free_of_attachments(log: Sequence[LogEvent]) -> bool:
    """True when the classes alone show that no message of ``log`` holds an attachment;
    False when :func:`_walk` must look. Every pass runs in C."""
    classes = set(map(type, log))
    if not classes <= _ANSWERED:
        return False
    blocks: list[object] = []
    for cls in classes & _CONTENT_OF.keys():
        of_class = compress(log, map(is_, map(type, log), repeat(cls)))
        blocks.extend(chain.from_iterable(map(_CONTENT_OF[cls], of_class)))
    return _blocks_free_of_attachments(blocks)


def _blocks_free_of_attachments(blocks: list[object]) -> bool:
    """True when every block is of a class that holds no attachment, or a tool result
    whose blocks are, at every depth."""
    classes = set(map(type, blocks))
    if classes <= _WITHOUT_ATTACHMENTS:
        return True
    if not classes <= _WITHOUT_ATTACHMENTS | {ToolResultBlock}:
        return False
    results = compress(blocks, map(is_, map(type, blocks), repeat(ToolResultBlock)))
    return _blocks_free_of_attachments(list(chain.from_iterable(map(_BLOCK_CONTENT, results))))


_RULED = frozenset(_EVENT_CLASSES)
"""The exact event classes the log rules check: each one holding messages is seen by
``Surface.put`` or, for ``inbox/spliced``, by its own rule."""


def require_stored(
    store: BlobHolder, events: Sequence[LogEvent], *, log_saw_none: bool = False
) -> None:
    """Refuse (before anything is written) events citing bytes the store lacks.

    ``log_saw_none`` says the session's log rules saw no message that may hold an
    attachment (``Surface.may_hold_attachments``: decided once per message as it is
    appended). Then events of the classes those rules check are not walked at all, only
    their classes looked at in C; an event of another class (a subclass passed in a
    seed, which the rules do not see) is walked as before."""
    if log_saw_none and _RULED.issuperset(map(type, events)):
        return
    for message, ref in message_attachments(events):
        if ref.sha256 in store._stored_blobs:
            continue
        if not store._has_blob(ref.sha256):
            raise AttachmentNotFoundError(
                f"message {message.id!r} holds attachment {ref.attachment_id}, whose bytes "
                f"{store} does not hold; save them with store.save_attachment first "
                "(nothing of this batch was written)",
                attachment_id=ref.attachment_id,
                message_id=message.id,
            )
        store._stored_blobs.add(ref.sha256)


def verify_stored(store: BlobHolder, found: Iterable[tuple[Message, AttachmentRef]]) -> None:
    """Check that every attachment ``message_attachments`` found in a log is stored and
    hashes to its reference."""
    checked: set[str] = set()
    for message, ref in found:
        if ref.sha256 in checked:
            continue
        data = store._get_blob(ref.sha256)
        if data is None:
            raise AttachmentNotFoundError(
                f"message {message.id!r} holds attachment {ref.attachment_id}, whose bytes "
                f"are missing from {store}",
                attachment_id=ref.attachment_id,
                message_id=message.id,
            )
        if not ref.matches(data):
            raise AttachmentCorruptError(
                f"message {message.id!r} holds attachment {ref.attachment_id}, but the "
                f"bytes {store} holds for it do not hash to it",
                attachment_id=ref.attachment_id,
                message_id=message.id,
            )
        checked.add(ref.sha256)
    store._stored_blobs.update(checked)


def read_checked(store: BlobHolder, ref: AttachmentRef) -> bytes:
    """The stored bytes of ``ref``, checked against it."""
    data = store._get_blob(ref.sha256)
    if data is None:
        raise AttachmentNotFoundError(
            f"{store} holds no bytes for attachment {ref.attachment_id}",
            attachment_id=ref.attachment_id,
        )
    if not ref.matches(data):
        raise AttachmentCorruptError(
            f"the bytes {store} holds for attachment {ref.attachment_id} do not hash to it",
            attachment_id=ref.attachment_id,
        )
    return data


__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MEDIA_TYPES",
    "AttachmentLimits",
    "checked_ref",
    "message_attachments",
    "read_checked",
    "require_stored",
    "verify_stored",
]
