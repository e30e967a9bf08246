"""What waits in a mailbox is found without reading every delivery ever made: a worker
scans many times a second, and an owner drains at every wake, for as long as the
service runs. SQLite and PostgreSQL keep an index of unanswered entries (an older
table gains it); JSONL keeps a marker per waiting session, made durable before the
entry, dropped when nothing waits, and rebuilt once for a root written without them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from dsh_session import Session
from dsh_session._header import SessionId
from dsh_session._mailbox._jsonl import FILE_NAME, WAITING_FOLDER
from dsh_session._mailbox._open import open_mailbox
from dsh_session._mailbox._records import MailboxAnswer
from dsh_session._mailbox._sqlite import MAILBOX_TABLE
from dsh_session.stores import JsonlSessionStore, SqliteSessionStore
from dsh_session.stores._sqlite_layout_one import create_layout_one

from .conftest import StoreFactory
from .test_mailbox import followup, stored_session

APPLIED = MailboxAnswer("applied")


async def test_pending_and_find_after_a_long_answered_history(open_store: StoreFactory) -> None:
    sid = await stored_session(open_store)
    other = await stored_session(open_store)
    mailbox = open_mailbox(open_store())
    answered = [followup(sid, f"old {n}") for n in range(30)]
    for entry in answered:
        await mailbox.put(entry)
        await mailbox.answer(sid, entry.key, APPLIED)
    late = followup(sid, "late")
    await mailbox.put(followup(other, "elsewhere"))
    await mailbox.put(late)
    assert [p.entry for p in await mailbox.pending(sid)] == [late]
    assert (await mailbox.pending(sid))[0].arrival == 30
    found = await mailbox.find(sid, answered[7].key)
    assert found is not None and found.entry == answered[7] and found.answer == APPLIED
    assert await mailbox.find(sid, "no such key") is None
    assert sorted(await mailbox.waiting()) == sorted([sid, other])
    await mailbox.answer(sid, late.key, APPLIED)
    assert await mailbox.waiting() == [other]
    assert await mailbox.pending(sid) == []
    await mailbox.close()


async def test_an_older_sqlite_mailbox_gains_the_index_its_scan_reads(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    create_layout_one(path)
    with sqlite3.connect(path) as db:  # the mailbox as earlier dsh made it: no index
        db.execute("DROP INDEX IF EXISTS dsh_mailbox_waiting")
        db.execute(MAILBOX_TABLE)
    async with SqliteSessionStore(path) as store:
        session = Session.create()
        store.attach(session)
        await store.flush(session)
        mailbox = open_mailbox(store)
        entry = followup(session.id, "hi")
        await mailbox.put(entry)
        assert await mailbox.waiting() == [session.id]
        await mailbox.close()
    db = sqlite3.connect(path)
    plan = db.execute(
        "EXPLAIN QUERY PLAN SELECT DISTINCT session_id FROM dsh_mailbox WHERE answer IS NULL"
    ).fetchall()
    assert "dsh_mailbox_waiting" in str(plan)


async def _jsonl_sessions(root: Path, count: int) -> list[SessionId]:
    async with JsonlSessionStore(root) as store:
        ids = []
        for _ in range(count):
            session = Session.create()
            store.attach(session)
            await store.flush(session)
            store.detach(session)
            ids.append(session.id)
        return ids


def _mailbox_file(root: Path, sid: SessionId) -> Path:
    [file] = [f for f in root.glob(f"*/*/{FILE_NAME}") if sid in f.read_text()]
    return file


async def test_a_jsonl_scan_reads_only_the_mailboxes_that_wait(tmp_path: Path) -> None:
    root = tmp_path / "s"
    quiet, busy = await _jsonl_sessions(root, 2)
    store = JsonlSessionStore(root)
    mailbox = open_mailbox(store)
    assert await mailbox.waiting() == []  # the first scan of a new root marks what waits
    done = followup(quiet, "answered")
    await mailbox.put(done)
    await mailbox.answer(quiet, done.key, APPLIED)
    await mailbox.put(followup(busy, "waits"))
    # A scan that read the quiet session's mailbox would now fail on it.
    _mailbox_file(root, quiet).write_bytes(b"not json\n")
    assert await mailbox.waiting() == [busy]
    await mailbox.close()


async def test_a_jsonl_root_written_without_markers_is_scanned_whole_once(
    tmp_path: Path,
) -> None:
    root = tmp_path / "s"
    first, second = await _jsonl_sessions(root, 2)
    mailbox = open_mailbox(JsonlSessionStore(root))
    await mailbox.put(followup(first, "before markers"))
    await mailbox.put(followup(second, "answered"))
    await mailbox.answer(second, (await mailbox.pending(second))[0].entry.key, APPLIED)
    assert not (root / WAITING_FOLDER).exists()  # no scan yet: as earlier dsh left it
    assert await mailbox.waiting() == [first]
    assert (root / WAITING_FOLDER / "complete").is_file()
    assert await mailbox.waiting() == [first]  # from the markers now
    await mailbox.close()


async def test_a_jsonl_marker_without_a_waiting_entry_is_dropped(tmp_path: Path) -> None:
    root = tmp_path / "s"
    marked, answered = await _jsonl_sessions(root, 2)
    mailbox = open_mailbox(JsonlSessionStore(root))
    assert await mailbox.waiting() == []
    entry = followup(answered, "one")
    await mailbox.put(entry)
    marks = sorted((root / WAITING_FOLDER).glob("*.waiting"))
    assert len(marks) == 1
    # A put that died after its marker, before its entry; an answer that died before
    # removing the marker.
    (root / WAITING_FOLDER / marks[0].name.replace(answered, marked)).touch()
    _mailbox_file(root, answered).open("a").write(
        json.dumps({"answer": entry.key, "outcome": "applied", "detail": ""}) + "\n"
    )
    assert await mailbox.waiting() == []
    assert list((root / WAITING_FOLDER).glob("*.waiting")) == []
    await mailbox.close()


async def test_a_retried_put_of_a_waiting_entry_marks_it_again(tmp_path: Path) -> None:
    root = tmp_path / "s"
    [sid] = await _jsonl_sessions(root, 1)
    mailbox = open_mailbox(JsonlSessionStore(root))
    assert await mailbox.waiting() == []
    entry = followup(sid, "once")
    await mailbox.put(entry)
    for mark in (root / WAITING_FOLDER).glob("*.waiting"):
        mark.unlink()  # a marker lost with the disk's cache
    assert await mailbox.waiting() == []
    assert (await mailbox.put(entry)).entry == entry  # the client retries: same receipt
    assert await mailbox.waiting() == [sid]
    await mailbox.close()
