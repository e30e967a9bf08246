"""A JSONL store opened on a harness store root lists and reads its sessions as the
harness holds them, in every form the harness writes, and changes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from session_stores.flat_logs import write_flat

from dsh_session._session import Session
from dsh_session.errors import SessionCorruptError, SessionFormatError, StoreError
from dsh_session.stores import JsonlSessionStore, open_store

from .roots import (
    CRASH_FORMS,
    JSONL_FORMS,
    SCENARIOS,
    TS_LOGS,
    copy_root,
    expected_session,
    tree,
    wire_events,
    wire_header,
)

CRASH_CLOSERS = ["tool/result", "tool/result", "step/end", "turn/end"]
"""What the repair appends to the crash cut: a result for each of its two calls."""


async def _list_ids(url: str) -> list[str]:
    async with open_store(url, mode="read") as store:
        return sorted(header.id for header in await store.list_sessions())


@pytest.mark.parametrize("form", JSONL_FORMS)
def test_a_root_lists_every_session_with_its_harness_header(form: str) -> None:
    assert asyncio.run(_list_ids(f"jsonl:///{TS_LOGS / form}")) == sorted(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("form", JSONL_FORMS)
def test_a_session_reads_as_the_harness_held_it(form: str, scenario: str) -> None:
    async def read() -> Session:
        async with JsonlSessionStore(TS_LOGS / form, mode="read") as store:
            session, report = await store.read(scenario)
            assert report.torn_tail is None and not report.appended
            return session

    session = asyncio.run(read())
    expected = expected_session(scenario)
    assert wire_events(session) == expected["events"]
    assert wire_header(session) == expected["header"]  # delegationDepth 0 = top level
    assert [m.id for m in session.derive_messages()] == expected["derivedMessageIds"]


def test_header_fields_dsh_does_not_model_are_kept(tmp_path: Path) -> None:
    root = tmp_path / "root"
    folder = root / "--work-app--" / "sub"
    folder.mkdir(parents=True)
    source = (TS_LOGS / "jsonl-plain" / "_no-cwd" / "plain-text" / "session.jsonl").read_bytes()
    _, body = source.split(b"\n", 1)
    body = body.replace(b'"plain-text"', b'"sub"')
    header = (
        b'{"type":"session","version":0,"id":"sub","createdAt":5,"cwd":"/work/app",'
        b'"parentSession":"plain-text","origin":"subagent","delegationDepth":2,'
        b'"agentPreset":"explore","futureField":{"kept":[1,2]}}\n'
    )
    (folder / "session.jsonl").write_bytes(header + body)

    async def read() -> Session:
        async with open_store(f"jsonl:///{root}", mode="read") as store:
            [listed] = await store.list_sessions()
            session, _ = await store.read("sub")
            assert listed == session.header
            return session

    assert wire_header(asyncio.run(read())) == {
        "version": 0,
        "id": "sub",
        "createdAt": 5,
        "cwd": "/work/app",
        "parentSession": "plain-text",
        "origin": "subagent",
        "delegationDepth": 2,
        "agentPreset": "explore",
        "futureField": {"kept": [1, 2]},
    }


@pytest.mark.parametrize("form", CRASH_FORMS)
def test_a_crash_cut_reads_with_the_harness_closers_in_the_report(form: str) -> None:
    async def read() -> tuple[Session, list[str]]:
        async with JsonlSessionStore(TS_LOGS / form, mode="read") as store:
            session, report = await store.read("crash-tool-call")
            return session, [event.type for event in report.appended]

    session, appended = asyncio.run(read())
    assert appended == CRASH_CLOSERS
    assert session.events[-1].type == "turn/end"


def test_the_legacy_log_reads_with_the_harness_ids() -> None:
    async def read() -> Session:
        async with JsonlSessionStore(TS_LOGS / "crash" / "jsonl-plain", mode="read") as store:
            session, _ = await store.read("legacy-pre-identity")
            return session

    ids = [message.id for message in asyncio.run(read()).derive_messages()]
    assert ids[:3] == [f"legacy-message:legacy-pre-identity:{seq}" for seq in (1, 3, 4)]


@pytest.mark.parametrize("form", [*JSONL_FORMS, *CRASH_FORMS])
def test_reading_a_root_changes_and_creates_nothing(form: str, tmp_path: Path) -> None:
    root = copy_root(form, tmp_path)
    before = tree(root)

    async def read_all() -> int:
        read = 0
        async with open_store(f"jsonl:///{root}", mode="read") as store:
            for header in await store.list_sessions():
                try:
                    await store.read(header.id)
                    read += 1
                except SessionFormatError:  # the compaction scenario, until the vocabulary
                    assert header.id == "compaction"
        return read

    assert asyncio.run(read_all()) >= 1
    assert tree(root) == before


def test_flat_dsh_logs_and_harness_folders_share_a_root(tmp_path: Path) -> None:
    """A flat log of earlier dsh, the harness's folders and a new session (which
    follows the root's plain encoding) are listed together."""
    root = copy_root("jsonl-plain", tmp_path)
    earlier = Session.create("earlier")
    earlier.append("session/end-seed", {})
    write_flat(root, earlier)

    async def run() -> list[str]:
        async with JsonlSessionStore(root) as store:
            session = Session.create()
            session.append("session/end-seed", {})
            store.attach(session)
            await store.flush(session)
        assert (root / "_no-cwd" / session.id / "session.jsonl").is_file()
        ids = await _list_ids(f"jsonl:///{root}")
        assert {session.id, "earlier"} <= set(ids)
        return ids

    assert set(asyncio.run(run())) > set(SCENARIOS)


def test_an_id_stored_flat_and_in_a_folder_is_refused(tmp_path: Path) -> None:
    root = copy_root("jsonl-unpacked", tmp_path)
    flat = (TS_LOGS / "jsonl-unpacked" / "_no-cwd" / "two-tools" / "session.jsonl").read_bytes()
    (root / "two-tools.jsonl").write_bytes(flat)

    async def run(action: str) -> None:
        async with JsonlSessionStore(root, mode="read") as store:
            if action == "list":
                await store.list_sessions()
            else:
                await store.read("two-tools")

    for action in ("list", "read"):
        with pytest.raises(SessionCorruptError, match="stored twice") as caught:
            asyncio.run(run(action))
        assert caught.value.field == "id"


def test_a_new_session_cannot_take_the_id_of_a_harness_session(tmp_path: Path) -> None:
    root = copy_root("jsonl-zstd", tmp_path)
    before = tree(root)

    async def run() -> None:
        async with JsonlSessionStore(root) as store:
            session = Session.create("plain-text")
            session.append("session/end-seed", {})
            store.attach(session)
            await store.flush(session)

    with pytest.raises(StoreError, match="already exists"):
        asyncio.run(run())
    assert tree(root) == before
