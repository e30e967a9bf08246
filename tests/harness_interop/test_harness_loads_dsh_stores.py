"""Stores written by dsh load and resume in the real TypeScript harness.

dsh writes a session with two tool-using turns to a new store: a SQLite database made
by ``SqliteSessionStore(new_path)`` (the harness's schema 17, mode 0600), or a
``JsonlSessionStore(root)`` root (its default form, and plain unpacked lines). Then
bench/harness_peer/load_resume.mts opens that store with the harness's own backend,
prepares the session as the harness's resume does (its load validation), publishes it
under the harness's session invariant checks, appends one turn and closes. dsh then
loads the store again and must find every event it wrote unchanged (message ids
included) followed by exactly the events the harness appended.

Runs only when DSH_BENCH_HARNESS, DSH_BENCH_TSX and DSH_BENCH_NODE name the harness
(bench/README.md, "Harness peer"); skipped otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _harness_peer import HarnessTools
from harness_stores.roots import wire_events, wire_header
from session_stores.scenarios import complete_turn
from session_stores.sqlite_files import layout_of

from dsh_agent import AgentLoop, tool
from dsh_llm import CallId, create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import JsonlSessionStore, Session, SessionStore, SqliteSessionStore

DRIVER = Path(__file__).resolve().parents[2] / "bench" / "harness_peer" / "load_resume.mts"
DRIVER_TIMEOUT = 180.0
"""Seconds for one driver run (about one on a quiet machine, mostly tsx compiling)."""

APPENDED_TYPES = [
    "session/end-seed",  # the harness marks the start of the resumed part
    "turn/start",
    "step/start",
    "user/message",
    "step/end",
    "turn/end",
]


@dataclass(frozen=True)
class StoreForm:
    """One kind of store: how dsh opens it and what the driver is told."""

    name: str
    location: str
    open: Callable[[Path], SessionStore]
    driver_args: tuple[str, ...]


FORMS = [
    StoreForm("sqlite", "sessions.db", SqliteSessionStore, ("--backend", "sqlite")),
    StoreForm("jsonl-zstd", "root", JsonlSessionStore, ("--backend", "jsonl")),
    StoreForm(
        "jsonl-plain-unpacked",
        "root",
        lambda root: JsonlSessionStore(root, compression="none", pack_chunks=False),
        ("--backend", "jsonl", "--compression", "none", "--pack-chunks", "false"),
    ),
]


class HarnessRefused(AssertionError):
    """The harness driver ended with an error: what the harness said, verbatim."""


def run_driver(tools: HarnessTools, form: StoreForm, location: Path, session_id: str) -> Any:
    """The driver's JSON summary; :class:`HarnessRefused` with the harness's own error."""
    command = [
        *tools.command(DRIVER),
        *form.driver_args,
        "--path",
        str(location),
        "--session",
        session_id,
    ]
    done = subprocess.run(
        command,
        cwd=DRIVER.parent,
        env=tools.environment(),
        capture_output=True,
        text=True,
        timeout=DRIVER_TIMEOUT,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    summary = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else None
    stderr = "\n".join(done.stderr.strip().splitlines()[-15:])
    if done.returncode != 0 or not isinstance(summary, dict) or "error" in summary:
        said = summary["error"] if isinstance(summary, dict) and "error" in summary else None
        raise HarnessRefused(
            f"{DRIVER.name} exited {done.returncode}; harness error: {said}; "
            f"stdout: {done.stdout[-2000:]!r}; stderr ends:\n{stderr}"
        )
    return summary


def write_session(store: SessionStore) -> Session:
    """A new session holding two completed turns, each with a step of two tool calls
    and their results, then a text answer; flushed and the store closed."""

    async def run() -> Session:
        async with store:
            session = Session.create()
            store.attach(session)
            complete_turn(session)
            complete_turn(session)
            await store.flush(session)
            return session

    return asyncio.run(run())


def load_session(store: SessionStore, session_id: str) -> tuple[Session, list[str]]:
    """The session as dsh loads (resumes) it, and the types of what that load appended."""

    async def run() -> tuple[Session, list[str]]:
        async with store:
            assert session_id in [header.id for header in await store.list_sessions()]
            loaded = await store.load(session_id)
            report = store.load_report(loaded)
            assert report.torn_tail is None
            return loaded, [event.type for event in report.appended]

    return asyncio.run(run())


def header_in_dsh_terms(header: dict[str, Any]) -> dict[str, Any]:
    """A header the harness holds, as dsh's header shows it: dsh's stores write the
    default ``delegationDepth`` 0 (and the harness reads it back), dsh's header leaves
    that default out."""
    return {k: v for k, v in header.items() if (k, v) != ("delegationDepth", 0)}


def private_folder(tmp_path: Path) -> Path:
    """A folder only its owner may write, as the harness's SQLite backend requires of a
    database's parent."""
    folder = tmp_path / "store"
    folder.mkdir(mode=0o700)
    os.chmod(folder, 0o700)
    return folder


@pytest.mark.parametrize("form", FORMS, ids=[form.name for form in FORMS])
def test_the_harness_resumes_a_dsh_session_and_dsh_loads_its_turn(
    tools: HarnessTools, form: StoreForm, tmp_path: Path
) -> None:
    location = private_folder(tmp_path) / form.location
    written = write_session(form.open(location))
    dsh_events = wire_events(written)
    dsh_message_ids = [message.id for message in written.derive_messages()]
    assert {"tool/call", "tool/result"} <= {event["type"] for event in dsh_events}
    if form.name == "sqlite":
        assert layout_of(location) == "schema 17"
        assert stat.S_IMODE(location.stat().st_mode) == 0o600

    summary = run_driver(tools, form, location, written.id)

    # What the harness loaded: dsh's session, as dsh wrote it.
    assert summary["listed"] == [written.id]
    assert header_in_dsh_terms(summary["header"]) == wire_header(written)
    assert summary["loadedEvents"] == len(dsh_events)
    assert sum(summary["loadedTypes"].values()) == len(dsh_events)
    assert summary["loadedMessageIds"] == dsh_message_ids
    # What it appended, after dsh's last event.
    appended = summary["appended"]
    assert [event["type"] for event in appended] == APPENDED_TYPES
    assert [event["seq"] for event in appended] == list(
        range(len(dsh_events), len(dsh_events) + len(APPENDED_TYPES))
    )
    prompt = next(event for event in appended if event["type"] == "user/message")
    assert prompt["data"]["id"] == summary["prompt"]["id"]
    assert summary["messageIds"] == [*dsh_message_ids, summary["prompt"]["id"]]

    loaded, dsh_appended = load_session(form.open(location), written.id)
    loaded_events = wire_events(loaded)
    # every event dsh wrote is unchanged, message ids and all
    assert loaded_events[: len(dsh_events)] == dsh_events
    # then exactly what the harness appended, as the harness held it
    assert loaded_events[len(dsh_events) : len(dsh_events) + len(appended)] == appended
    # and dsh's own resume marker, nothing else (the harness closed its turn)
    assert dsh_appended == ["session/end-seed"]
    assert len(loaded_events) == len(dsh_events) + len(appended) + 1
    assert [message.id for message in loaded.derive_messages()] == summary["messageIds"]
    assert wire_header(loaded) == header_in_dsh_terms(summary["header"])
    if form.name == "sqlite":
        assert layout_of(location) == "schema 17"
        assert stat.S_IMODE(location.stat().st_mode) == 0o600


def write_decided_approvals(store: SessionStore) -> Session:
    """A new session, written by an ``AgentLoop``, whose one turn asks about two calls
    of a tool that needs approval: the person approves one and denies the other."""

    @tool(requires_approval=True)
    async def deploy(version: str) -> str:
        """Deploy a version."""
        return f"deployed {version}"

    def call(call_id: str, version: str) -> dict[str, object]:
        return {"call_id": call_id, "name": "deploy", "arguments": {"version": version}}

    async def run() -> Session:
        async with store:
            session = Session.create()
            store.attach(session)
            adapter = ScriptedAdapter(
                [reply(tool_calls=[call("call_ok", "v1"), call("call_dep", "v2")]), "Done."]
            )
            agent = AgentLoop(
                session=session, adapter=adapter, provider="test", model="scripted", tools=[deploy]
            )
            agent.followup(create_user_message("deploy v1 and v2"))
            await agent.when_idle()
            await agent.approve(CallId("call_ok"))
            await agent.deny(CallId("call_dep"), "not v2")
            await agent.when_idle()
            await agent.aclose()
            return session

    return asyncio.run(run())


@pytest.mark.parametrize("form", FORMS[:2], ids=[form.name for form in FORMS[:2]])
def test_the_harness_resumes_a_session_with_a_denied_approval(
    tools: HarnessTools, form: StoreForm, tmp_path: Path
) -> None:
    """Issue 34: the harness refused dsh's denied call ("tool/result for call_dep with
    no prior tool/call in this step"); a denial now logs the call first, as the
    harness's own tools do."""
    location = private_folder(tmp_path) / form.location
    written = write_decided_approvals(form.open(location))
    dsh_events = wire_events(written)
    decided = [e["data"]["outcome"] for e in dsh_events if e["type"] == "approval/decided"]
    assert decided == ["allowed-once", "rejected"]

    summary = run_driver(tools, form, location, written.id)

    assert summary["loadedEvents"] == len(dsh_events)
    assert summary["loadedMessageIds"] == [m.id for m in written.derive_messages()]
    assert [event["type"] for event in summary["appended"]] == APPENDED_TYPES
    loaded, _ = load_session(form.open(location), written.id)
    assert wire_events(loaded)[: len(dsh_events)] == dsh_events
