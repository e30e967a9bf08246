"""The mailbox on every backend: durable entries in arrival order, idempotent by key,
answered once; a harness database gains no table; a torn JSONL line is cut off."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dsh_llm import create_user_message
from dsh_session import Session
from dsh_session._header import SessionId
from dsh_session._mailbox._jsonl import FILE_NAME
from dsh_session._mailbox._open import open_mailbox
from dsh_session._mailbox._records import MailboxAnswer, MailboxEntry
from dsh_session.errors import DeliveryConflictError
from dsh_session.stores import SqliteSessionStore

from .conftest import StoreFactory


def followup(session_id: SessionId, text: str, key: str | None = None) -> MailboxEntry:
    message = create_user_message(text)
    return MailboxEntry(
        session_id=session_id,
        key=key or message.id,
        kind="followup",
        policy="enqueue",
        message=message,
    )


async def stored_session(open_store: StoreFactory) -> SessionId:
    store = open_store()
    session = Session.create()
    store.attach(session)
    await store.flush(session)
    store.detach(session)
    if type(store).__name__ != "MemorySessionStore":
        await store.close()
    return session.id


async def test_entries_keep_arrival_order_and_answers(open_store: StoreFactory) -> None:
    sid = await stored_session(open_store)
    store = open_store()
    mailbox = open_mailbox(store)
    first, second = followup(sid, "one"), followup(sid, "two")
    assert (await mailbox.put(first)).arrival == 0
    assert (await mailbox.put(second)).arrival == 1
    assert await mailbox.waiting() == [sid]
    await mailbox.answer(sid, first.key, MailboxAnswer("applied"))
    await mailbox.answer(sid, first.key, MailboxAnswer("refused", "late"))
    pending = await mailbox.pending(sid)
    assert [p.entry for p in pending] == [second]
    entries = await mailbox.entries(sid)
    assert entries[0].answer == MailboxAnswer("applied")
    assert entries[1].entry.message == second.message
    [later] = await mailbox.entries(sid, from_arrival=1)
    assert later.arrival == 1 and later.entry.message == second.message
    assert await mailbox.entries(sid, from_arrival=2) == []
    for bad in (-1, True, "1"):
        with pytest.raises(ValueError, match="from_arrival"):
            await mailbox.entries(sid, from_arrival=bad)  # type: ignore[arg-type]
    await mailbox.close()
    reopened = open_mailbox(open_store())
    assert [e.entry for e in await reopened.entries(sid)] == [first, second]
    await reopened.close()


async def test_same_key_returns_the_first_and_other_content_is_refused(
    open_store: StoreFactory,
) -> None:
    sid = await stored_session(open_store)
    mailbox = open_mailbox(open_store())
    entry = followup(sid, "hello")
    first = await mailbox.put(entry)
    for _ in range(3):
        assert await mailbox.put(entry) == first
    other = followup(sid, "something else", key=entry.key)
    with pytest.raises(DeliveryConflictError) as refused:
        await mailbox.put(other)
    assert refused.value.delivery_id == entry.key and "hello" in str(refused.value)
    assert "something else" in str(refused.value)
    assert len(await mailbox.entries(sid)) == 1
    await mailbox.close()


async def test_harness_database_gets_a_companion_not_a_table(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with SqliteSessionStore(path) as store:
        session = Session.create()
        store.attach(session)
        await store.flush(session)
        mailbox = open_mailbox(store)
        await mailbox.put(followup(session.id, "hi"))
        await mailbox.close()
    tables = {n for (n,) in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert "dsh_mailbox" not in tables
    assert (tmp_path / "sessions.db.dsh-mailbox").exists()


async def test_torn_jsonl_line_is_skipped_then_cut(tmp_path: Path) -> None:
    from dsh_session.stores import JsonlSessionStore

    async with JsonlSessionStore(tmp_path / "s") as store:
        session = Session.create()
        store.attach(session)
        await store.flush(session)
        mailbox = open_mailbox(store)
        first = followup(session.id, "kept")
        await mailbox.put(first)
        [file] = (tmp_path / "s").glob(f"*/*/{FILE_NAME}")
        with file.open("ab") as out:
            out.write(b'{"put":{"key":"torn')  # a crash in the middle of an append
        assert [e.entry for e in await mailbox.entries(session.id)] == [first]
        second = followup(session.id, "after")
        assert (await mailbox.put(second)).arrival == 1
        assert [e.entry for e in await mailbox.entries(session.id)] == [first, second]
        assert b"torn" not in file.read_bytes()
