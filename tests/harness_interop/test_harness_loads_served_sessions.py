"""A session served through the mailbox (``connect`` + ``Worker``) still loads and
resumes in the real TypeScript harness, mailbox files and all: on SQLite the mailbox
is a companion database beside the schema-17 file, on JSONL ``dsh-mailbox.jsonl`` sits
in the session's folder, and neither may stop the harness from listing, loading or
appending. dsh then loads the harness's turn and goes on serving the session.
Runs only when the DSH_BENCH_* variables name the harness (bench/README.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from _harness_peer import HarnessTools
from harness_stores.roots import wire_events, wire_header
from service import agents

from dsh_agent import Worker, connect
from dsh_llm import create_user_message
from dsh_session import Session
from dsh_session.stores import SessionStore

from .test_harness_loads_dsh_stores import (
    APPENDED_TYPES,
    FORMS,
    StoreForm,
    header_in_dsh_terms,
    private_folder,
    run_driver,
)


def serve(store: SessionStore, session_id: str | None, texts: list[str]) -> Session:
    """Deliver ``texts`` to the session (a new one when ``session_id`` is None) through
    the mailbox, let a worker answer them, and read the session back."""

    async def run() -> Session:
        async with store:
            sid = session_id
            if sid is None:
                created = Session.create()
                store.attach(created)
                await store.flush(created)
                store.detach(created)
                sid = created.id
            async with connect(store, sid) as agent:
                for text in texts:
                    await agent.followup(create_user_message(text))
                async with Worker(store, agents.echo, idle_release=0.2, scan_interval=0.05):
                    await asyncio.wait_for(agent.wait_idle(), 60)
            session, _ = await store.read(sid)
            return session

    return asyncio.run(run())


def mailbox_files(location: Path) -> list[str]:
    """The mailbox's files the store made next to (or inside) the harness's layout."""
    root = location.parent if location.suffix == ".db" else location
    return sorted(p.name for p in root.rglob("*dsh-mailbox*"))


@pytest.mark.parametrize("form", FORMS, ids=[form.name for form in FORMS])
def test_the_harness_resumes_a_served_session_and_the_service_goes_on(
    tools: HarnessTools, form: StoreForm, tmp_path: Path
) -> None:
    location = private_folder(tmp_path) / form.location
    served = serve(form.open(location), None, ["first", "second"])
    dsh_events = wire_events(served)
    assert mailbox_files(location)  # the mailbox is on disk beside the log

    summary = run_driver(tools, form, location, served.id)

    assert summary["listed"] == [served.id]  # the mailbox is not taken for a session
    assert header_in_dsh_terms(summary["header"]) == wire_header(served)
    assert summary["loadedEvents"] == len(dsh_events)
    assert summary["loadedMessageIds"] == [m.id for m in served.derive_messages()]
    assert [event["type"] for event in summary["appended"]] == APPENDED_TYPES

    again = serve(form.open(location), served.id, ["third"])
    events = wire_events(again)
    assert events[: len(dsh_events)] == dsh_events  # dsh's events, unchanged
    harness_turn = events[len(dsh_events) : len(dsh_events) + len(APPENDED_TYPES)]
    assert harness_turn == summary["appended"]  # the harness's, as it wrote them
    ids = [m.id for m in again.derive_messages()]
    assert ids[: len(summary["messageIds"])] == summary["messageIds"]
    answers = [
        "".join(getattr(block, "text", "") for block in m.content)
        for m in again.derive_messages()
        if m.role == "assistant"
    ]
    assert answers[0:2] == ["echo: first", "echo: second"]
    assert answers[-1] == "echo: third"  # the service answered after the harness's turn
