"""``dsh chat`` at a terminal against llama.cpp's real server: the reply streams onto
the screen, the prompt comes back, and the session is stored. No API key is set: a
server of one's own given with ``--base-url`` needs none."""

from __future__ import annotations

from pathlib import Path

from cli.runner import DSH_COMMAND, Dsh, dsh_environment
from cli.terminal import Terminal
from cli.test_chat_terminal import PROMPT, wait_until_idle

from real_llm.server import LlamaServer
from real_llm.tiny_model import PLAIN_REPLY, REPLIES


def test_a_terminal_chat_streams_the_reply_and_stores_the_session(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    argv = [*DSH_COMMAND, "chat", "--provider", "openai", "--model", "tiny"]
    argv += ["--base-url", llama_server.base_url]
    env = {**dsh_environment(), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    env.pop("OPENAI_API_KEY", None)
    terminal = Terminal(argv, cwd=tmp_path, env=env)
    try:
        terminal.expect_screen(PROMPT)
        terminal.type("hi\r")
        terminal.expect_screen(f"assistant › {PLAIN_REPLY}", timeout=60)
        wait_until_idle(terminal)  # the prompt is back on the input line
        screen = [line for line in terminal.screen() if line]
        reply_at = screen.index(f"assistant › {PLAIN_REPLY}")  # one line, not mixed up
        assert screen[reply_at - 1] == "  hi"  # under the prompt it answers
        assert screen[reply_at + 1 :] == [PROMPT]  # and the prompt is back below it
        terminal.type("\x04")  # Ctrl-D at the idle prompt: leave
        assert terminal.wait() == 0
    finally:
        terminal.close()

    dsh = Dsh(tmp_path)
    (stored,) = dsh.json("sessions", "list")
    assert stored["turns"] == 1
    assert stored["firstPrompt"] == "hi"
    events = dsh.json("sessions", "show", stored["id"])
    deltas = [
        e["data"]["chunk"]["text"]
        for e in events
        if e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "text-delta"
    ]
    assert "".join(deltas) == PLAIN_REPLY
    assert len(deltas) >= len(REPLIES["plain"])  # streamed piece by piece, not in one go
    (answer,) = [e["data"]["message"] for e in events if e["type"] == "assistant/message"]
    assert answer["content"][0]["text"] == PLAIN_REPLY
    ends = [e["data"]["reason"]["kind"] for e in events if e["type"] == "turn/end"]
    assert ends == ["completed"]
