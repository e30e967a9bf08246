"""``dsh sessions list|show|verify|fork|export`` over the database a demo wrote."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from cli.runner import DemoRun, Dsh
from dsh_cli._commands.rebuild import id_list_digest
from dsh_llm import ToolCallBlock, create_assistant_message, create_user_message
from dsh_session import Session, SessionEventAdapter
from dsh_session.stores import SqliteSessionStore


def _one_line_error(result: Any, *fragments: str) -> None:
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


# --- list -----------------------------------------------------------------------------


def test_list_json_summarizes_each_session(demo: DemoRun) -> None:
    (summary,) = Dsh(demo.directory).json("sessions", "list")
    assert summary["id"] == demo.session_id
    assert isinstance(summary["createdAt"], int)
    assert summary["turns"] == 2
    # prompt, steer, context, follow-up, 3 tool results and 5 assistant answers
    assert summary["messages"] == 12
    assert summary["firstPrompt"] == "What's the weather in Paris?"


def test_list_prints_a_line_per_session(demo: DemoRun) -> None:
    output = Dsh(demo.directory).ok("sessions", "list")
    (line,) = [line for line in output.splitlines() if demo.session_id in line]
    assert "What's the weather in Paris?" in line
    assert line.split()[3:5] == ["2", "12"]  # id, date, time, turns, messages


def test_list_of_an_empty_store(dsh: Dsh) -> None:
    (dsh.cwd / "nothing-here").mkdir()
    assert dsh.json("sessions", "list", "--store", "jsonl:///nothing-here") == []
    assert "no sessions" in dsh.ok("sessions", "list", "--store", "jsonl:///nothing-here")


# --- show -----------------------------------------------------------------------------


def test_show_renders_roles_sources_tool_calls_and_short_ids(demo: DemoRun) -> None:
    dsh = Dsh(demo.directory)
    output = dsh.ok("sessions", "show", demo.session_id)
    events = dsh.json("sessions", "show", demo.session_id)
    prompt = next(event["data"] for event in events if event["type"] == "user/message")
    assert f"you […{prompt['id'][-8:]}]" in output
    for expected in (
        "assistant · demo/weather-and-sums",
        "context · demo",
        "thinking: I need to call weather before I can answer.",
        '→ weather({"city": "Paris"})  call call-1',
        "← Paris: 17 °C, light rain",
        "turn 2",
    ):
        assert expected in output


def test_show_json_is_the_wire_log(demo: DemoRun) -> None:
    events = Dsh(demo.directory).json("sessions", "show", demo.session_id)
    assert [event["seq"] for event in events] == list(range(len(events)))
    for event in events:
        assert SessionEventAdapter.validate_python(event).model_dump(mode="json") == event
    answers = [event["data"] for event in events if event["type"] == "assistant/message"]
    assert all("usage" in answer for answer in answers)
    blocks = [block["type"] for answer in answers for block in answer["message"]["content"]]
    assert "reasoning" in blocks and "tool-call" in blocks


async def _store_a_crashed_session(database: Path) -> str:
    """A log whose first turn was cancelled mid-stream and whose second was cut by a
    crash while a tool ran (a ``tool/call`` with no result)."""
    session = Session.create()
    append = session.append
    model = {"provider": "p", "model": "m"}
    append("turn/start", {"turn": 1})
    append("step/start", {"turn": 1, "step": 1})
    append("user/message", create_user_message(content="count", source={"kind": "user"}))
    append("request/header", {"header": {"config": model}, "reason": "initial"})
    chunk = {"type": "text-delta", "index": 0, "text": "one two"}
    delta = append("assistant/chunk", {"turn": 1, "step": 1, "chunk": chunk})
    prefix = create_assistant_message(content="one two", source=model)
    append(
        "assistant/message",
        {"turn": 1, "step": 1, "message": prefix, "interrupted": True},
        source_event_seqs=[delta.seq],
    )
    append("step/end", {"turn": 1, "step": 1})
    cancelled = {"kind": "aborted", "reason": {"kind": "user"}}
    append("turn/end", {"turn": 1, "reason": cancelled})
    append("turn/start", {"turn": 2})
    append("step/start", {"turn": 2, "step": 1})
    append("user/message", create_user_message(content="look it up", source={"kind": "user"}))
    call = ToolCallBlock(call_id="call-7", name="lookup", arguments="{}")
    asking = create_assistant_message(content=[call], source=model)
    append("assistant/message", {"turn": 2, "step": 1, "message": asking})
    append(
        "tool/call", {"turn": 2, "step": 1, "callId": "call-7", "name": "lookup", "arguments": "{}"}
    )
    async with SqliteSessionStore(database) as store:
        store.attach(session)
        await store.flush(session)
    return session.id


def test_show_marks_interrupted_answers_cancelled_turns_and_crash_repairs(dsh: Dsh) -> None:
    session_id = asyncio.run(_store_a_crashed_session(dsh.cwd / "dsh.db"))
    output = dsh.ok("sessions", "show", session_id)
    for expected in (
        "interrupted: kept the prefix streamed before the cancel",
        "cancelled by the user",
        "TOOL_OUTCOME_UNKNOWN",
        "repaired: synthesized when a log cut by a crash was loaded",
        "interrupted: the process stopped mid-turn",
    ):
        assert expected in output
    report = dsh.json("sessions", "verify", session_id)
    assert report["valid"] is True
    # show repaired in memory only: the stored log still ends mid-turn
    assert report["repairs"] == ["a crash had left a turn open; load closed it with 3 event(s)"]


async def _store_a_multi_line_turn(database: Path) -> str:
    """One completed turn: a three-line prompt, and a two-line answer whose usage
    counts cached input."""
    session = Session.create()
    append = session.append
    model = {"provider": "p", "model": "m"}
    append("turn/start", {"turn": 1})
    append("step/start", {"turn": 1, "step": 1})
    prompt = "first line\nsecond line\nthird line"
    append("user/message", create_user_message(content=prompt, source={"kind": "user"}))
    append("request/header", {"header": {"config": model}, "reason": "initial"})
    answer = create_assistant_message(content="an answer\nin two lines", source=model)
    usage = {"inputTokens": 12, "outputTokens": 5, "cacheReadTokens": 30}
    append("assistant/message", {"turn": 1, "step": 1, "message": answer, "usage": usage})
    append("step/end", {"turn": 1, "step": 1})
    append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    async with SqliteSessionStore(database) as store:
        store.attach(session)
        await store.flush(session)
    return session.id


def test_show_indents_multi_line_messages_and_counts_cached_input(dsh: Dsh) -> None:
    session_id = asyncio.run(_store_a_multi_line_turn(dsh.cwd / "dsh.db"))
    lines = dsh.ok("sessions", "show", session_id).splitlines()
    start = lines.index("  first line")
    assert lines[start : start + 3] == ["  first line", "  second line", "  third line"]
    start = lines.index("  an answer")
    assert lines[start : start + 2] == ["  an answer", "  in two lines"]
    assert "  (tokens in 12 / cached in 30 / out 5)" in lines


def test_verify_reports_a_repair_made_on_load(dsh: Dsh) -> None:
    session_id = asyncio.run(_store_a_crashed_session(dsh.cwd / "dsh.db"))
    output = dsh.ok("sessions", "verify", session_id)
    assert "repaired on load: a crash had left a turn open" in output


# --- verify ---------------------------------------------------------------------------


def test_verify_rebuilds_every_request(demo: DemoRun) -> None:
    dsh = Dsh(demo.directory)
    report = dsh.json("sessions", "verify", demo.session_id)
    assert report["valid"] is True
    assert report["id"] == demo.session_id
    requests = report["requests"]
    assert [request["number"] for request in requests] == [1, 2, 3, 4, 5]
    # each request is its predecessor plus the ids the log added since: only those
    # are listed, and the full list they make matches the count and digest given
    ids: list[str] = []
    for request in requests:
        (splice,) = request["splices"]
        assert splice == {"at": len(ids), "removed": 0, "added": splice["added"]}
        assert request["added"] == len(splice["added"]) > 0
        assert request["rewritten"] == 0
        ids += splice["added"]
        assert request["messageCount"] == len(ids)
        assert request["messageDigest"] == id_list_digest(ids)
    assert len(set(ids)) == len(ids)
    output = dsh.ok("sessions", "verify", demo.session_id)
    assert f"session {demo.session_id}: the log is valid" in output
    assert "5 requests rebuilt" in output


def test_verify_of_a_damaged_log_fails(demo_copy: Dsh, demo: DemoRun) -> None:
    with sqlite3.connect(demo_copy.cwd / "dsh.db") as db:
        # the demo's new database is in the harness's schema 17: damage one row's data
        db.execute("UPDATE events SET data = '{\"turn\"' WHERE seq = 7")
    result = demo_copy.run("sessions", "verify", demo.session_id)
    _one_line_error(result, demo.session_id)
    as_json = demo_copy.run("sessions", "verify", demo.session_id, "--json")
    assert as_json.returncode == 1
    report = json.loads(as_json.stdout)
    assert report["valid"] is False
    assert report["id"] == demo.session_id
    assert "7" in report["error"]


# --- fork -----------------------------------------------------------------------------


def test_fork_at_the_end_of_a_turn_starts_a_new_session(demo_copy: Dsh, demo: DemoRun) -> None:
    events = demo_copy.json("sessions", "show", demo.session_id)
    first_turn_end = next(event["seq"] for event in events if event["type"] == "turn/end")
    child = demo_copy.json("sessions", "fork", demo.session_id, "--at", str(first_turn_end))
    assert child["id"] != demo.session_id
    assert child["parentSession"] == demo.session_id
    assert child["seedLength"] == first_turn_end + 1
    assert child["turns"] == 1
    listed = {summary["id"] for summary in demo_copy.json("sessions", "list")}
    assert listed == {demo.session_id, child["id"]}
    child_events = demo_copy.json("sessions", "show", child["id"])
    assert child_events[: first_turn_end + 1] == events[: first_turn_end + 1]
    assert child_events[first_turn_end + 1]["type"] == "session/end-seed"
    plain = demo_copy.ok("sessions", "fork", child["id"])
    assert f"forked {child['id']}" in plain


def test_fork_inside_a_turn_is_refused(demo_copy: Dsh, demo: DemoRun) -> None:
    result = demo_copy.run("sessions", "fork", demo.session_id, "--at", "3")
    _one_line_error(result, "inside turn 1")
    assert len(demo_copy.json("sessions", "list")) == 1


# --- export ---------------------------------------------------------------------------


def test_export_writes_the_jsonl_store_format(demo: DemoRun, tmp_path: Path) -> None:
    dsh = Dsh(demo.directory)
    exported = dsh.ok("sessions", "export", demo.session_id, "--format", "jsonl")
    header, *lines = exported.splitlines()
    assert json.loads(header)["type"] == "session"
    assert json.loads(header)["id"] == demo.session_id
    events = dsh.json("sessions", "show", demo.session_id)
    assert [json.loads(line) for line in lines] == events
    # the export is a log the JSONL store reads as it is
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / f"{demo.session_id}.jsonl").write_text(exported, encoding="utf-8")
    store = f"jsonl:///{logs}"
    assert dsh.json("sessions", "show", demo.session_id, "--store", store) == events


def test_export_to_a_file(demo: DemoRun, tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    result = Dsh(demo.directory).run("sessions", "export", demo.session_id, "--out", str(target))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert target.read_text(encoding="utf-8").count("\n") > 100


# --- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["show", "verify", "fork", "export"])
def test_an_unknown_session_id_is_one_line_and_non_zero(demo: DemoRun, action: str) -> None:
    result = Dsh(demo.directory).run("sessions", action, "no-such-session")
    _one_line_error(result, "no-such-session")


async def _store_sessions(database: Path, *ids: str) -> None:
    async with SqliteSessionStore(database) as store:
        for session_id in ids:
            session = Session.create(session_id)
            session.append("turn/start", {"turn": 1})
            session.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
            store.attach(session)
            await store.flush(session)


@pytest.mark.parametrize("action", ["show", "verify", "fork", "export"])
def test_a_unique_id_prefix_names_the_session(dsh: Dsh, action: str) -> None:
    asyncio.run(_store_sessions(dsh.cwd / "dsh.db", "abc-1111", "abd-2222", "abd-3333"))
    result = dsh.run("sessions", action, "abc")
    assert result.returncode == 0, result.stderr
    assert "abc-1111" in result.stdout + result.stderr


def test_an_ambiguous_or_unknown_prefix_is_one_line(dsh: Dsh) -> None:
    asyncio.run(_store_sessions(dsh.cwd / "dsh.db", "abc-1111", "abd-2222", "abd-3333"))
    ambiguous = dsh.run("sessions", "show", "abd")
    _one_line_error(ambiguous, "'abd' is the start of 2 session ids", "abd-2222", "abd-3333")
    _one_line_error(dsh.run("sessions", "show", "x"), "no session", "'x'")
    _one_line_error(dsh.run("sessions", "show", ""), "no session")
    assert json.loads(dsh.ok("sessions", "show", "abd-2222", "--json"))[0]["type"] == "turn/start"


def test_a_bad_store_url_is_one_line_and_non_zero(dsh: Dsh) -> None:
    _one_line_error(dsh.run("sessions", "list", "--store", "redis://x"), "redis://x")


def test_an_unreachable_postgres_store_is_one_line_and_non_zero(dsh: Dsh) -> None:
    _one_line_error(
        dsh.run("sessions", "list", "--store", "postgresql://nobody@x/db"), "cannot connect"
    )


def test_debug_shows_the_traceback(dsh: Dsh) -> None:
    for args in (["--debug", "sessions", "show", "nope"], ["sessions", "show", "nope", "--debug"]):
        result = dsh.run(*args)
        assert result.returncode != 0
        assert "Traceback" in result.stderr
        assert "StoreNotFoundError" in result.stderr  # no dsh.db here
