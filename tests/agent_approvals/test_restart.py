"""An approval survives its process: the agent waiting on it is killed with SIGKILL,
and a decision in a new process over the reloaded session continues the same turn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_agent import reconstruct_requests
from dsh_llm._request import GenerateRequest
from dsh_session import (
    ApprovalAskedEvent,
    ApprovalDecidedEvent,
    SessionEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from dsh_session.stores import open_store

from .agent_process import DENY_REASON
from .support import results

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("agent_process.py")


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _ask_and_kill(url: str, work: Path) -> tuple[str, str]:
    """Start the agent, wait until it is idle waiting for approval, SIGKILL it."""
    child = _spawn("ask", url, str(work))
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
    finally:
        child.send_signal(signal.SIGKILL)
        _, stderr = child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    word, session_id, call_id = [*line.split(), "", "", ""][:3]
    assert word == "waiting", stderr
    return session_id, call_id


def _decide(decision: str, url: str, work: Path, session_id: str, call_id: str) -> None:
    child = _spawn(decision, url, str(work), session_id, call_id)
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 0, stderr
    assert stdout == "done\n"


def _runs(work: Path, tool: str) -> int:
    counter = work / f"{tool}.count"
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def _requests(work: Path) -> list[GenerateRequest]:
    lines = (work / "requests.jsonl").read_text().splitlines()
    return [GenerateRequest.model_validate_json(line) for line in lines]


async def _events(url: str, session_id: str) -> list[SessionEvent]:
    async with open_store(url, mode="read") as store:
        session, _ = await store.read(session_id)
    return list(session.events)


def _types(events: list[SessionEvent]) -> list[str]:
    return [event.type for event in events if event.type != "assistant/chunk"]


@pytest.mark.parametrize(
    ("decision", "backend"), [("approve", "sqlite"), ("deny", "sqlite"), ("approve", "jsonl")]
)
async def test_a_decision_after_sigkill_continues_the_same_turn(
    decision: str, backend: str, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path}/agent.db" if backend == "sqlite" else f"jsonl:///{tmp_path}/logs"
    session_id, call_id = _ask_and_kill(db, tmp_path)
    assert call_id == "call-apply"
    waiting = await _events(db, session_id)
    # asked about before the calls ran, all durable before the agent went idle
    assert _types(waiting)[-4:] == [
        "assistant/message",
        "approval/asked",
        "tool/call",
        "tool/result",
    ]
    asked = next(event for event in waiting if isinstance(event, ApprovalAskedEvent))
    assert (asked.data.call_id, asked.data.tool_name) == (call_id, "apply")
    assert _runs(tmp_path, "count") == 1 and _runs(tmp_path, "apply") == 0
    assert reconstruct_requests(waiting) == _requests(tmp_path)

    _decide(decision, db, tmp_path, session_id, call_id)

    events = await _events(db, session_id)
    assert _runs(tmp_path, "count") == 1  # completed before the kill, not rerun
    assert _runs(tmp_path, "apply") == (1 if decision == "approve" else 0)
    assert reconstruct_requests(events) == _requests(tmp_path)
    assert len(_requests(tmp_path)) == 2
    # one turn, from the prompt to the answer after the decision
    assert sum(isinstance(event, TurnStartEvent) for event in events) == 1
    (end,) = [event for event in events if isinstance(event, TurnEndEvent)]
    assert end.data.reason.kind == "completed"
    (decided,) = [event for event in events if isinstance(event, ApprovalDecidedEvent)]
    expected = "allowed-once" if decision == "approve" else "rejected"
    assert decided.data.outcome == expected
    by_call = results(events)
    applied = by_call[call_id].data.message.content[0]
    last_request = _requests(tmp_path)[-1]
    assert last_request.messages[-1] == by_call[call_id].data.message  # the model sees it
    if decision == "approve":
        assert not applied.is_error
    else:
        assert applied.is_error and DENY_REASON in str(applied.content[0])
        error = by_call[call_id].data.error
        assert error is not None and error.code == "TOOL_APPROVAL_DENIED"
    assert _types(events)[len(_types(waiting)) :] == [
        "session/end-seed",
        "approval/decided",
        "tool/call",  # a denied call has one too, as the harness's invariant requires
        "tool/result",
        "step/end",
        "step/start",
        "request/header",
        "assistant/message",
        "step/end",
        "turn/end",
    ]
