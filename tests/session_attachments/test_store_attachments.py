"""Every store keeps an attachment's bytes once, before any event cites them, and
checks them when a log is loaded or read."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from dsh_llm import AttachmentRef, FileBlock, ImageBlock, TextBlock, UserMessage
from dsh_session import (
    Attachment,
    AttachmentCorruptError,
    AttachmentLimits,
    AttachmentNotFoundError,
    AttachmentRefusedError,
    Session,
    create_user_message_with_attachments,
)
from dsh_session._events.classes import UserMessageEvent
from dsh_session.errors import StoreError
from dsh_session.stores import JsonlSessionStore, MemorySessionStore, SessionStore

from .conftest import StoreFactory
from .images import png

PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"


def ref_at(message: UserMessage, index: int) -> AttachmentRef:
    """The attachment of the message's ``index``-th block."""
    block = message.content[index]
    assert isinstance(block, ImageBlock | FileBlock) and block.attachment is not None
    return block.attachment


async def _saved_session(store: SessionStore, *texts: str) -> tuple[Session, UserMessage]:
    session = Session.create()
    store.attach(session)
    message = await create_user_message_with_attachments(
        store,
        "what is in these?",
        attachments=[
            Attachment(png(3, 2), "image/png", "cat.png"),
            Attachment(PDF, "application/pdf"),
        ],
    )
    session.append("user/message", message)
    await store.flush(session)
    return session, message


def _replace_blob(
    backend: str, tmp_path: Path, store: SessionStore, sha: str, data: bytes | None, dsn: str | None
) -> None:
    """Delete (``None``) or overwrite an attachment's stored bytes behind the store."""
    if backend == "memory":
        assert isinstance(store, MemorySessionStore)
        blobs = store._blobs  # shared by every store object of the test
        if data is None:
            del blobs[sha]
        else:
            blobs[sha] = data
    elif backend == "jsonl":
        path = tmp_path / "sessions" / "attachments" / "v1" / "objects" / sha[:2] / sha
        if data is None:
            path.unlink()
        else:
            path.write_bytes(data)
    elif backend.startswith("sqlite"):
        name = "sessions.db" if backend == "sqlite-layout1" else "sessions.db.dsh-attachments"
        with sqlite3.connect(tmp_path / name) as db:
            if data is None:
                db.execute("DELETE FROM dsh_attachments WHERE sha256 = ?", (sha,))
            else:
                db.execute("UPDATE dsh_attachments SET data = ? WHERE sha256 = ?", (data, sha))
    else:
        assert dsn is not None
        with psycopg.connect(dsn, autocommit=True) as db:
            if data is None:
                db.execute("DELETE FROM dsh_attachments WHERE sha256 = %s", (sha,))
            else:
                db.execute("UPDATE dsh_attachments SET data = %s WHERE sha256 = %s", (data, sha))


async def test_a_message_with_attachments_loads_equal_with_its_bytes(
    open_store: StoreFactory,
) -> None:
    async with open_store() as store:
        session, message = await _saved_session(store)
        store.detach(session)
    async with open_store() as store:
        loaded = await store.load(session.id)
        (again,) = [m for m in loaded.derive_messages() if m.id == message.id]
        assert again == message
        image, document = again.content[1], again.content[2]
        assert isinstance(image, ImageBlock) and image.attachment is not None
        assert isinstance(document, FileBlock)
        assert await store.read_attachment(image.attachment) == png(3, 2)
        assert await store.read_attachment(document.attachment) == PDF


async def test_the_event_holds_the_reference_not_the_bytes(open_store: StoreFactory) -> None:
    async with open_store() as store:
        _, message = await _saved_session(store)
    wire = message.model_dump(mode="json")
    assert wire["content"][1] == {
        "type": "image",
        "attachment": {
            "attachmentId": message.content[1].attachment.attachment_id,  # type: ignore[union-attr]
            "mediaType": "image/png",
            "bytes": len(png(3, 2)),
            "width": 3,
            "height": 2,
            "name": "cat.png",
        },
    }
    assert "data" not in str(wire["content"][1]) and "base64" not in str(wire)


async def test_the_same_bytes_are_stored_once(
    backend: str, open_store: StoreFactory, tmp_path: Path
) -> None:
    image = png(4, 4)
    async with open_store() as store:
        first = await store.save_attachment(image, media_type="image/png", name="a.png")
        second = await store.save_attachment(image, media_type="image/png", name="b.png")
    assert first.attachment_id == second.attachment_id
    assert first.name != second.name  # the name is the message's, not the bytes'
    if backend == "jsonl":
        objects = list((tmp_path / "sessions" / "attachments" / "v1" / "objects").rglob("*"))
        assert [p.name for p in objects if p.is_file()] == [first.sha256]
    if backend.startswith("sqlite"):
        name = "sessions.db" if backend == "sqlite-layout1" else "sessions.db.dsh-attachments"
        with sqlite3.connect(tmp_path / name) as db:
            assert db.execute("SELECT count(*) FROM dsh_attachments").fetchone() == (1,)


async def test_a_missing_blob_is_a_typed_error_at_load_naming_the_message(
    backend: str, open_store: StoreFactory, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    dsn = request.getfixturevalue("postgres_dsn") if backend == "postgres" else None
    store = open_store()
    session, message = await _saved_session(store)
    store.detach(session)
    ref = ref_at(message, 2)
    _replace_blob(backend, tmp_path, store, ref.sha256, None, dsn)
    await store.close()
    store = open_store()
    with pytest.raises(AttachmentNotFoundError) as raised:
        await store.load(session.id)
    assert raised.value.message_id == message.id
    assert raised.value.attachment_id == ref.attachment_id
    assert message.id in str(raised.value)
    with pytest.raises(AttachmentNotFoundError):
        await store.read(session.id)
    await store.close()


async def test_corrupt_bytes_are_a_typed_error_at_load_naming_the_message(
    backend: str, open_store: StoreFactory, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    dsn = request.getfixturevalue("postgres_dsn") if backend == "postgres" else None
    store = open_store()
    session, message = await _saved_session(store)
    store.detach(session)
    ref = ref_at(message, 1)
    _replace_blob(backend, tmp_path, store, ref.sha256, b"not the image", dsn)
    await store.close()
    store = open_store()
    with pytest.raises(AttachmentCorruptError) as raised:
        await store.load(session.id)
    assert (raised.value.message_id, raised.value.attachment_id) == (message.id, ref.attachment_id)
    with pytest.raises(AttachmentCorruptError):
        await store.read_attachment(ref)
    await store.close()


async def test_a_flush_citing_bytes_the_store_lacks_writes_nothing(
    open_store: StoreFactory,
) -> None:
    async with MemorySessionStore() as elsewhere:
        ref = await elsewhere.save_attachment(PDF, media_type="application/pdf")
    async with open_store() as store:
        session = Session.create()
        store.attach(session)
        session.append(
            "user/message",
            UserMessage.model_validate(
                {
                    "id": "m-1",
                    "role": "user",
                    "source": {"kind": "user"},
                    "content": [{"type": "file", "attachment": ref.model_dump(mode="json")}],
                }
            ),
        )
        with pytest.raises(AttachmentNotFoundError) as raised:
            await store.flush(session)
        assert raised.value.message_id == "m-1"
        assert await store.list_sessions() == []
        # once the bytes are saved, the queued batch goes through whole
        await store.save_attachment(PDF, media_type="application/pdf")
        await store.flush(session)
        assert [h.id for h in await store.list_sessions()] == [session.id]


async def test_limits_refuse_before_anything_is_stored(open_store: StoreFactory) -> None:
    async with open_store() as store:
        store.attachment_limits = AttachmentLimits(
            max_bytes=10, media_types=frozenset({"image/png"})
        )
        with pytest.raises(AttachmentRefusedError, match="more than the limit of 10"):
            await store.save_attachment(png(8, 8), media_type="image/png")
        with pytest.raises(AttachmentRefusedError, match="'application/pdf' is not accepted"):
            await store.save_attachment(b"%PDF", media_type="application/pdf")
        store.attachment_limits = AttachmentLimits()
        with pytest.raises(AttachmentRefusedError, match="image/png image, not image/jpeg"):
            await store.save_attachment(png(2, 2), media_type="image/jpeg")
        with pytest.raises(AttachmentRefusedError, match="not a readable image/png"):
            await store.save_attachment(b"plain text", media_type="image/png")


async def test_paths_are_typed_by_their_bytes_or_suffix(
    open_store: StoreFactory, tmp_path: Path
) -> None:
    picture = tmp_path / "photo.upload"
    picture.write_bytes(png(5, 7))
    notes = tmp_path / "notes.txt"
    notes.write_text("remember the milk\n")
    async with open_store() as store:
        message = await create_user_message_with_attachments(store, attachments=[picture, notes])
    image, text = message.content
    assert isinstance(image, ImageBlock) and image.attachment is not None
    assert (image.attachment.media_type, image.attachment.width, image.attachment.height) == (
        "image/png",
        5,
        7,
    )
    assert image.attachment.name == "photo.upload"
    assert isinstance(text, FileBlock) and text.attachment.media_type == "text/plain"
    assert not any(isinstance(block, TextBlock) for block in message.content)


async def test_a_read_only_store_reads_attachments_but_saves_none(tmp_path: Path) -> None:
    from dsh_session.stores import JsonlSessionStore

    async with JsonlSessionStore(tmp_path / "s") as store:
        session, message = await _saved_session(store)
    async with JsonlSessionStore(tmp_path / "s", mode="read") as reader:
        loaded, _ = await reader.read(session.id)
        assert loaded.derive_messages()[-1] == message
        with pytest.raises(StoreError, match="read-only"):
            await reader.save_attachment(PDF, media_type="application/pdf")


async def test_a_fork_cites_the_same_bytes_without_a_copy(open_store: StoreFactory) -> None:
    async with open_store() as store:
        session, message = await _saved_session(store)
        fork = session.fork()
        store.attach(fork)
        await store.flush(fork)
        store.detach(fork)
        store.detach(session)
    async with open_store() as store:
        loaded = await store.load(fork.id)
        assert loaded.derive_messages()[0] == message
        assert await store.read_attachment(ref_at(message, 1)) == png(3, 2)


class _SubclassedUserMessageEvent(UserMessageEvent):
    """An event class the log rules do not know (they dispatch on exact classes)."""


def _citing(ref: AttachmentRef, message_id: str) -> UserMessage:
    return UserMessage.model_validate(
        {
            "id": message_id,
            "role": "user",
            "source": {"kind": "user"},
            "content": [{"type": "file", "attachment": ref.model_dump(mode="json")}],
        }
    )


def _spliced(ref: AttachmentRef) -> Session:
    """A message reaching the log in an inbox splice, not on the surface."""
    session = Session.create()
    session.append(
        "agent/inbox/spliced",
        {"target": "next-turn", "start": 0, "inserted": [_citing(ref, "m-spliced")]},
    )
    return session


def _seeded_with_a_subclass(ref: AttachmentRef) -> Session:
    """A message in a seed event of a class the log rules do not see."""
    event = _SubclassedUserMessageEvent.model_validate(
        {
            "type": "user/message",
            "seq": 0,
            "time": 1,
            "data": _citing(ref, "m-seeded"),
            "surfaceOp": "append",
        }
    )
    return Session.create(seed=[event])


@pytest.mark.parametrize("build", [_spliced, _seeded_with_a_subclass])
async def test_a_flush_refuses_a_missing_attachment_wherever_the_message_sits(
    build: Callable[[AttachmentRef], Session], tmp_path: Path
) -> None:
    """The flush skips its walk when the log rules saw no message that may hold an
    attachment; a message they see off the surface, or one in an event they do not
    see at all, must still be checked."""
    async with MemorySessionStore() as elsewhere:
        ref = await elsewhere.save_attachment(PDF, media_type="application/pdf")
    async with JsonlSessionStore(tmp_path / "sessions") as store:
        session = build(ref)
        store.attach(session)
        with pytest.raises(AttachmentNotFoundError):
            await store.flush(session)
        assert await store.list_sessions() == []
        await store.save_attachment(PDF, media_type="application/pdf")
        await store.flush(session)
