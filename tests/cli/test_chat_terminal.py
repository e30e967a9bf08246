"""``dsh chat`` at a terminal: typing while the model streams steers the turn without
mixing into the reply, Ctrl-C cancels it (keeping pending input), and a second Ctrl-C
leaves. What the user sees is checked on the emulated screen."""

from __future__ import annotations

from pathlib import Path

from cli.openai_server import FakeOpenAIServer, fake_openai_server
from cli.runner import DSH_COMMAND, Dsh, dsh_environment
from cli.terminal import Terminal

PROMPT = "you ›"
STEER_PROMPT = "steer ›"


def start_chat(server: FakeOpenAIServer, directory: Path, *options: str) -> Terminal:
    argv = [*DSH_COMMAND, "chat", "--provider", "openai", "--model", "fake-model"]
    argv += ["--base-url", server.base_url, *options]
    # a terminal that draws (not "dumb"), and no cursor-position queries to answer
    env = {**dsh_environment(), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    return Terminal(argv, cwd=directory, env=env)


def last_line(terminal: Terminal) -> str:
    return [line for line in terminal.screen() if line][-1]


def wait_until_idle(terminal: Terminal) -> None:
    """Wait for the idle prompt on the input line (it reads ``steer ›`` while a turn runs)."""
    while last_line(terminal) != PROMPT:
        terminal.read_more()


def test_typing_steers_the_running_turn_and_ctrl_c_cancels_it(tmp_path: Path) -> None:
    with fake_openai_server(delay=0.15) as server:
        terminal = start_chat(server, tmp_path)
        try:
            terminal.expect_screen(PROMPT)
            terminal.type("hello there, please answer with a few words\r")
            terminal.expect_screen("assistant › You")  # the reply is streaming
            terminal.type("and this too\r")
            terminal.expect_screen("steering the running turn")
            terminal.expect_screen("You said: and this too")  # the same turn took the steer
            wait_until_idle(terminal)
            terminal.type("count to 100\r")
            terminal.expect_screen("assistant › 1 2 3")
            terminal.type("\x03")
            terminal.expect_screen("cancelling the turn")
            terminal.expect_screen("cancelled by the user")
            terminal.type("\x03")
            assert terminal.wait() == 0
        finally:
            terminal.close()
        requests = server.requests
    assert len(requests) == 3
    steered = [(m["role"], m["content"]) for m in requests[1]["messages"]]
    assert steered == [
        ("user", "hello there, please answer with a few words"),
        ("assistant", "You said: hello there, please answer with a few words"),
        ("user", "and this too"),
    ]
    (summary,) = Dsh(tmp_path).json("sessions", "list")
    events = Dsh(tmp_path).json("sessions", "show", summary["id"])
    turn_ends = [e["data"] for e in events if e["type"] == "turn/end"]
    assert [end["reason"]["kind"] for end in turn_ends] == ["completed", "aborted"]
    assert turn_ends[1]["reason"]["reason"] == {"kind": "user"}
    steps_of_turn_1 = [e for e in events if e["type"] == "step/start" and e["data"]["turn"] == 1]
    assert len(steps_of_turn_1) == 2
    (cut,) = [
        e["data"] for e in events if e["type"] == "assistant/message" and e["data"]["turn"] == 2
    ]
    assert cut["interrupted"] is True
    assert cut["message"]["content"][0]["text"].startswith("1 2 3")


def test_a_steer_being_typed_stays_out_of_the_streamed_reply(tmp_path: Path) -> None:
    steer = "actually stop at 10 please"
    with fake_openai_server(delay=0.1) as server:
        terminal = start_chat(server, tmp_path)
        try:
            terminal.expect_screen(PROMPT)
            terminal.type("count to 40\r")
            terminal.expect_screen("assistant › 1 2 3")
            terminal.type(steer)
            assert terminal.expect_screen(steer) == f"{STEER_PROMPT} {steer}"
            terminal.expect_screen(" 9 10 11")  # the reply streamed on while we typed
            screen = terminal.screen()
            assert [line for line in screen if steer in line] == [f"{STEER_PROMPT} {steer}"]
            (streamed,) = [line for line in screen if "assistant ›" in line]
            assert streamed.startswith("assistant › 1 2 3 4 5 6 7 8 9 10 11")
            terminal.type("\r")
            terminal.expect_screen("steering the running turn")
            terminal.expect_screen(f"You said: {steer}")
            terminal.type("/exit\r")
            assert terminal.wait() == 0
        finally:
            terminal.close()
    replies = [line for line in terminal.screen() if line.startswith("assistant ›")]
    assert all("actually" not in line for line in replies[:-1]), replies
    assert replies[-1] == f"assistant › You said: {steer}"


def test_after_inject_at_idle_the_prompt_is_back(tmp_path: Path) -> None:
    with fake_openai_server() as server:
        terminal = start_chat(server, tmp_path)
        try:
            terminal.expect_screen(PROMPT)
            terminal.type("/inject the user is in Lisbon\r")
            terminal.expect_screen("context added without starting a turn")
            wait_until_idle(terminal)
            terminal.type("hello\r")
            terminal.expect_screen("You said: hello")
            terminal.type("/exit\r")
            assert terminal.wait() == 0
        finally:
            terminal.close()
    (request,) = server.requests
    assert [m["content"] for m in request["messages"]] == ["the user is in Lisbon", "hello"]


def test_ctrl_c_keeps_context_injected_during_the_turn(tmp_path: Path) -> None:
    with fake_openai_server(delay=0.1) as server:
        terminal = start_chat(server, tmp_path)
        try:
            terminal.expect_screen(PROMPT)
            terminal.type("count to 100\r")
            terminal.expect_screen("assistant › 1 2")
            terminal.type("/inject the user is in Lisbon\r")
            terminal.expect_screen("context added without starting a turn")
            terminal.type("\x03")
            terminal.expect_screen("cancelled by the user")
            terminal.type("\x03")  # leave with the context still pending
            assert terminal.wait() == 0
        finally:
            terminal.close()
        assert "1 pending message(s) kept in session" in terminal.output
        (summary,) = Dsh(tmp_path).json("sessions", "list")
        resumed = Dsh(tmp_path).run(
            *("chat", "--provider", "openai", "--model", "m", "--base-url", server.base_url),
            *("--session", summary["id"]),
            input="hello\n",
        )
        assert resumed.returncode == 0, resumed.stderr
        contents = [m["content"] for m in server.requests[-1]["messages"]]
    assert contents[-2:] == ["the user is in Lisbon", "hello"]


def test_end_of_input_lets_the_running_turn_finish(tmp_path: Path) -> None:
    with fake_openai_server(delay=0.05) as server:
        terminal = start_chat(server, tmp_path)
        try:
            terminal.expect_screen(PROMPT)
            terminal.type("count to 20\r")
            terminal.expect_screen("assistant › 1")
            terminal.type("\x04")  # Ctrl-D on an empty line: end of input
            assert terminal.wait() == 0
        finally:
            terminal.close()
    assert any(
        line.startswith("assistant › 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20")
        for line in terminal.screen()
    ), terminal.screen()
    (summary,) = Dsh(tmp_path).json("sessions", "list")
    assert summary["turns"] == 1
    events = Dsh(tmp_path).json("sessions", "show", summary["id"])
    (turn_end,) = [e["data"] for e in events if e["type"] == "turn/end"]
    assert turn_end["reason"] == {"kind": "completed"}
