"""``dsh chat`` at a terminal: typing while the model streams steers the turn, Ctrl-C
cancels it, and a second Ctrl-C leaves."""

from __future__ import annotations

from pathlib import Path

from cli.openai_server import FakeOpenAIServer, fake_openai_server
from cli.runner import DSH_COMMAND, Dsh, dsh_environment
from cli.terminal import Terminal

PROMPT = "you › "


def start_chat(server: FakeOpenAIServer, directory: Path) -> Terminal:
    argv = [*DSH_COMMAND, "chat", "--provider", "openai", "--model", "fake-model"]
    argv += ["--base-url", server.base_url, "--api-key-env", "FAKE_API_KEY"]
    return Terminal(argv, cwd=directory, env={**dsh_environment(), "FAKE_API_KEY": "x"})


def test_typing_steers_the_running_turn_and_ctrl_c_cancels_it(tmp_path: Path) -> None:
    with fake_openai_server(delay=0.15) as server:
        terminal = start_chat(server, tmp_path)
        try:
            terminal.expect(PROMPT)
            terminal.type("hello there, please answer with a few words\r")
            terminal.expect("assistant › You")  # the reply is streaming
            terminal.type("and this too\r")
            terminal.expect("steering the running turn")
            terminal.expect("You said: and this too")  # the same turn took the steer
            terminal.expect(PROMPT)
            terminal.type("count to 100\r")
            terminal.expect("assistant › 1 2 3")
            terminal.type("\x03")
            terminal.expect("cancelling the turn")
            terminal.expect("cancelled by the user")
            terminal.expect(PROMPT)
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


def test_end_of_input_lets_the_running_turn_finish(tmp_path: Path) -> None:
    with fake_openai_server(delay=0.05) as server:
        terminal = start_chat(server, tmp_path)
        try:
            terminal.expect(PROMPT)
            terminal.type("count to 20\r")
            terminal.expect("assistant › 1")
            terminal.type("\x04")  # Ctrl-D at the start of a line: end of input
            assert terminal.wait() == 0
        finally:
            terminal.close()
    assert "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20" in terminal.output
    (summary,) = Dsh(tmp_path).json("sessions", "list")
    assert summary["turns"] == 1
    events = Dsh(tmp_path).json("sessions", "show", summary["id"])
    (turn_end,) = [e["data"] for e in events if e["type"] == "turn/end"]
    assert turn_end["reason"] == {"kind": "completed"}
