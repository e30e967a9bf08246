"""``dsh chat`` with piped input, against a local OpenAI-compatible server."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import pytest

from cli.openai_server import FakeOpenAIServer, chat, fake_openai_server
from cli.runner import DSH_COMMAND, Dsh


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with fake_openai_server() as running:
        yield running


def session_of(notes: str) -> str:
    match = re.search(r"(?:new|resumed) session (\S+?)[:\s]", notes)
    assert match is not None, notes
    return match.group(1)


def test_each_line_is_a_prompt_and_each_reply_is_printed(
    dsh: Dsh, server: FakeOpenAIServer
) -> None:
    replies, notes, status = chat(dsh, server, "hello there\ncount to 3\n")
    assert status == 0, notes
    assert replies == "You said: hello there\n1 2 3\n"
    assert len(server.requests) == 2
    second = server.requests[1]
    assert second["model"] == "fake-model"
    assert [message["role"] for message in second["messages"]] == ["user", "assistant", "user"]
    assert second["messages"][1]["content"] == "You said: hello there"
    summary = next(s for s in dsh.json("sessions", "list") if s["id"] == session_of(notes))
    assert summary["turns"] == 2


def test_a_chat_with_no_prompt_stores_no_session(dsh: Dsh, server: FakeOpenAIServer) -> None:
    _, notes, status = chat(dsh, server, "")
    assert status == 0, notes
    assert dsh.json("sessions", "list") == []


def test_a_session_is_resumed_with_its_history(dsh: Dsh, server: FakeOpenAIServer) -> None:
    _, notes, _ = chat(dsh, server, "first\n")
    session_id = session_of(notes)
    replies, resumed_notes, status = chat(dsh, server, "second\n", "--session", session_id)
    assert status == 0, resumed_notes
    assert replies == "You said: second\n"
    assert f"resumed session {session_id}: 1 turns, 2 messages" in resumed_notes
    contents = [message["content"] for message in server.requests[-1]["messages"]]
    assert contents == ["first", "You said: first", "second"]
    events = dsh.json("sessions", "show", session_id)
    assert [e["data"]["turn"] for e in events if e["type"] == "turn/start"] == [1, 2]


def test_inject_adds_context_without_starting_a_turn(dsh: Dsh, server: FakeOpenAIServer) -> None:
    replies, notes, status = chat(dsh, server, "/inject the user is in Lisbon\nhello\n")
    assert status == 0, notes
    assert replies == "You said: hello\n"
    (request,) = server.requests
    assert [message["content"] for message in request["messages"]] == [
        "the user is in Lisbon",
        "hello",
    ]
    events = dsh.json("sessions", "show", session_of(notes))
    context = next(e["data"] for e in events if e["type"] == "user/message")
    assert context["source"] == {"kind": "plugin", "plugin": "dsh-chat"}


def test_a_failed_turn_makes_the_exit_status_non_zero(dsh: Dsh, server: FakeOpenAIServer) -> None:
    result = dsh.run(
        *("chat", "--provider", "openai", "--model", "m", "--api-key-env", "FAKE_API_KEY"),
        *("--base-url", server.base_url.replace("/v1", "/nowhere")),
        input="hello\n",
        env={"FAKE_API_KEY": "not-a-secret"},
    )
    assert result.returncode == 1
    assert "dsh: turn 1 error" in result.stderr
    assert "404" in result.stderr


def test_retry_runs_the_failed_turn_again_without_sending_the_prompt_twice(
    dsh: Dsh, server: FakeOpenAIServer
) -> None:
    server.refusals_left = 1

    replies, notes, status = chat(dsh, server, "hello\n/retry\n/retry\n")

    assert replies == "You said: hello\n"
    assert "dsh: turn 1 error AUTH" in notes
    assert "dsh: running the failed turn again" in notes
    assert "dsh: nothing to retry: the last turn (2) ended 'completed'" in notes
    assert status == 1  # turn 1 failed
    first, second = server.requests
    assert first == second  # the same history: one user message, sent in both
    assert [m["role"] for m in second["messages"]] == ["user"]


def test_a_transient_failure_is_retried_and_said_on_stderr(
    dsh: Dsh, server: FakeOpenAIServer
) -> None:
    server.refusals_left, server.refusal_status = 1, 503

    replies, notes, status = chat(dsh, server, "hello\n")

    assert status == 0, notes
    assert replies == "You said: hello\n"
    [retry] = [line for line in notes.splitlines() if "retry 1 of 5" in line]
    assert retry.startswith("dsh: SERVER: HTTP 503: refused as scripted; retry 1 of 5 in ")
    assert len(server.requests) == 2


def test_a_missing_api_key_is_one_line_and_non_zero(dsh: Dsh) -> None:
    result = dsh.run(
        *("chat", "--provider", "anthropic", "--model", "m", "--api-key-env", "NO_SUCH_KEY"),
        input="hello\n",
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "NO_SUCH_KEY" in result.stderr


def test_resuming_an_unknown_session_is_one_line_and_non_zero(
    dsh: Dsh, server: FakeOpenAIServer
) -> None:
    _, notes, status = chat(dsh, server, "hello\n", "--session", "no-such-session")
    assert status == 1
    assert notes.count("\n") == 1
    assert "no-such-session" in notes
    assert server.requests == []


def test_a_failed_turn_prints_its_error_and_no_empty_reply(
    dsh: Dsh, server: FakeOpenAIServer
) -> None:
    result = dsh.run(
        *("chat", "--provider", "openai", "--model", "m", "--api-key-env", "FAKE_API_KEY"),
        *("--base-url", server.base_url.replace("/v1", "/nowhere")),
        input="hello\n",
        env={"FAKE_API_KEY": "not-a-secret"},
    )
    assert result.returncode == 1
    assert result.stdout == ""
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("dsh: turn")]
    assert "404" in error


def test_a_local_server_needs_no_api_key(dsh: Dsh, server: FakeOpenAIServer) -> None:
    result = dsh.run(
        *("chat", "--provider", "openai", "--model", "m", "--base-url", server.base_url),
        *("--api-key-env", "NO_SUCH_KEY"),
        input="hello\n",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "You said: hello\n"


def test_the_hosted_api_still_needs_a_key(dsh: Dsh) -> None:
    result = dsh.run(
        *("chat", "--provider", "openai", "--model", "m", "--api-key-env", "NO_SUCH_KEY"),
        *("--base-url", "https://api.openai.com/v1"),
        input="hello\n",
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "NO_SUCH_KEY" in result.stderr


def test_a_second_chat_on_a_session_in_use_refuses_in_one_line(
    dsh: Dsh, server: FakeOpenAIServer
) -> None:
    _, notes, _ = chat(dsh, server, "first\n")
    session_id = session_of(notes)
    argv = [*DSH_COMMAND, "chat", "--provider", "openai", "--model", "m"]
    argv += ["--base-url", server.base_url, "--session", session_id]
    first = subprocess.Popen(
        argv,
        cwd=dsh.cwd,
        env=dsh.env,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert first.stderr is not None and first.stdin is not None
        assert "resumed session" in first.stderr.readline()  # it holds the session now
        second = dsh.run(
            *("chat", "--provider", "openai", "--model", "m", "--base-url", server.base_url),
            *("--session", session_id),
            input="second\n",
        )
        assert second.returncode == 1
        assert second.stdout == ""
        assert second.stderr.count("\n") == 1, second.stderr
        assert session_id in second.stderr
        first.stdin.write("still mine\n")
        first.stdin.close()
        assert first.wait(timeout=60) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    contents = [message["content"] for message in server.requests[-1]["messages"]]
    assert contents == ["first", "You said: first", "still mine"]


def test_model_setting_flags_reach_the_request(dsh: Dsh, server: FakeOpenAIServer) -> None:
    _, notes, status = chat(
        dsh,
        server,
        "hello there\n",
        "--temperature",
        "0.3",
        "--top-p",
        "0.8",
        "--max-tokens",
        "64",
        "--reasoning-effort",
        "low",
        "--stop",
        "END",
        "--stop",
        "STOP",
    )
    assert status == 0, notes
    [request] = server.requests
    assert (request["temperature"], request["top_p"], request["max_tokens"]) == (0.3, 0.8, 64)
    assert (request["reasoning_effort"], request["stop"]) == ("low", ["END", "STOP"])
