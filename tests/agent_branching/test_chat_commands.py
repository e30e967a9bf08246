"""``/regenerate`` and ``/edit`` in ``dsh chat`` with piped input against a local
OpenAI-compatible server, and how ``dsh sessions show`` marks edits and branches."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli.openai_server import FakeOpenAIServer, chat, fake_openai_server
from cli.runner import Dsh

from dsh_cli import main


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with fake_openai_server() as running:
        yield running


@pytest.fixture
def dsh(tmp_path: Path) -> Dsh:
    return Dsh(tmp_path)


@pytest.fixture
def sessions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., str]:
    """``dsh sessions ACTION ... --store`` of the chat's store, run in this process
    (the chat itself runs as a real subprocess); returns standard output."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")

    def run(*args: str) -> str:
        capsys.readouterr()
        status = main(["sessions", *args, "--store", f"sqlite:///{tmp_path / 'dsh.db'}"])
        out, err = capsys.readouterr()
        assert status == 0, err
        return out

    return run


def new_session(notes: str) -> str:
    match = re.search(r"new session (\S+) in", notes)
    assert match is not None, notes
    return match.group(1)


def contents(request: dict[str, object]) -> list[object]:
    messages = request["messages"]
    assert isinstance(messages, list)
    return [message["content"] for message in messages]


def test_regenerate_asks_again_without_the_old_answer(
    dsh: Dsh, server: FakeOpenAIServer, sessions: Callable[..., str]
) -> None:
    replies, notes, status = chat(dsh, server, "hello\ncount to 3\n/regenerate\n")
    assert status == 0, notes
    assert replies == "You said: hello\n1 2 3\n1 2 3\n"
    assert "regenerating the answer to the last prompt" in notes
    assert contents(server.requests[-1]) == ["hello", "You said: hello", "count to 3"]
    session_id = new_session(notes)
    events = json.loads(sessions("show", "--json", session_id))
    replaces = [e for e in events if isinstance(e.get("surfaceOp"), dict)]
    assert len(replaces) == 1
    assert replaces[0]["type"] == "assistant/message"
    assert replaces[0]["data"]["message"]["content"] == []
    shown = sessions("show", session_id)
    assert "regenerating: the answer in event" in shown
    verified = sessions("verify", session_id)
    assert "the log is valid" in verified


def test_edit_continues_on_a_branch_and_show_marks_it(
    dsh: Dsh, server: FakeOpenAIServer, sessions: Callable[..., str]
) -> None:
    replies, notes, status = chat(dsh, server, "hello\nhow are you\n/edit count to 3\nmore\n")
    assert status == 0, notes
    assert replies == "You said: hello\nYou said: how are you\n1 2 3\nYou said: more\n"
    assert contents(server.requests[2]) == ["hello", "You said: hello", "count to 3"]
    assert contents(server.requests[3])[-2:] == ["1 2 3", "more"]
    original = new_session(notes)
    match = re.search(r"on a new branch: session (\S+), forked from (\S+) ", notes)
    assert match is not None, notes
    branch = match.group(1)
    assert match.group(2) == original
    # the original is intact: its two prompts and answers
    original_events = json.loads(sessions("show", "--json", original))
    prompts = [e["data"] for e in original_events if e["type"] == "user/message"]
    assert [p["content"][0]["text"] for p in prompts] == ["hello", "how are you"]
    branch_events = json.loads(sessions("show", "--json", branch))
    edited = next(e["data"] for e in branch_events if e["type"] == "user/message" and e["seq"] > 13)
    assert edited["source"] == {"kind": "user", "editOf": prompts[1]["id"]}
    assert edited["id"] not in {p["id"] for p in prompts}
    shown = sessions("show", branch)
    assert f"forked from session {original} at seq " in shown
    assert f"edited from […{prompts[1]['id'][-8:]}]" in shown
    assert f"branch: session {branch}, forked at seq " in sessions("show", original)
    for session_id in (original, branch):
        assert "the log is valid" in sessions("verify", session_id)


def test_edit_by_id_fragment_edits_an_earlier_prompt(
    dsh: Dsh, server: FakeOpenAIServer, sessions: Callable[..., str]
) -> None:
    _, notes, status = chat(dsh, server, "first\nsecond\n")
    assert status == 0, notes
    original = new_session(notes)
    events = json.loads(sessions("show", "--json", original))
    first = next(e["data"]["id"] for e in events if e["type"] == "user/message")
    replies, notes, status = chat(
        dsh, server, f"/edit @…{first[-8:]} count to 3\n", "--session", original
    )
    assert status == 0, notes
    assert replies == "1 2 3\n"
    assert contents(server.requests[-1]) == ["count to 3"]


def test_refused_commands_say_why_and_fail_the_chat(dsh: Dsh, server: FakeOpenAIServer) -> None:
    replies, notes, status = chat(dsh, server, "/regenerate\n/edit\nhello\n/edit @nope hi\n")
    assert status == 1
    assert replies == "You said: hello\n"
    assert "dsh: error: nothing to regenerate" in notes
    assert "dsh: error: nothing to edit" in notes
    assert "dsh: error: no prompt in this session's history has an id like 'nope'" in notes
    assert len(server.requests) == 1
