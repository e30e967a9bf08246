"""``dsh sessions show`` lists a session's attachments once each, with their messages."""

from __future__ import annotations

from pathlib import Path

from cli.runner import Dsh

from dsh_llm import ImageBlock
from dsh_session import Attachment, Session, create_user_message_with_attachments
from dsh_session.stores import SqliteSessionStore

from .images import png


async def test_show_lists_each_attachment_once_with_the_messages_holding_it(
    tmp_path: Path,
) -> None:
    dsh = Dsh(tmp_path)
    image = png(3, 2)
    async with SqliteSessionStore(dsh.cwd / "dsh.db") as store:
        session = Session.create()
        store.attach(session)
        first = await create_user_message_with_attachments(
            store, "this one", attachments=[Attachment(image, "image/png", "plot.png")]
        )
        again = await create_user_message_with_attachments(
            store, "and again", attachments=[Attachment(image, "image/png", "plot.png")]
        )
        session.append("user/message", first)
        session.append("user/message", again)
        await store.flush(session)
    block = first.content[1]
    assert isinstance(block, ImageBlock) and block.attachment is not None

    shown = dsh.ok("sessions", "show", session.id)

    assert f"[image image/png, 3x2, {len(image)} bytes, 'plot.png'" in shown
    assert f"attachments: 1 ({len(image)} bytes, stored once each)" in shown
    assert block.attachment.attachment_id in shown
    assert first.id in shown.split("stored once each")[1]
    assert again.id in shown.split("stored once each")[1]
