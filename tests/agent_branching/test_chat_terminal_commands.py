"""``/regenerate`` and ``/edit`` in ``dsh chat`` at a (pseudo) terminal: the chat
follows the new branch after an edit, and says what it did on the screen."""

from __future__ import annotations

from pathlib import Path

from cli.openai_server import fake_openai_server
from cli.test_chat_terminal import PROMPT, start_chat, wait_until_idle


def test_regenerate_then_edit_at_a_terminal_follows_the_branch(tmp_path: Path) -> None:
    with fake_openai_server() as server:
        terminal = start_chat(server, tmp_path)
        try:
            terminal.expect_screen(PROMPT)
            terminal.type("hello\r")
            terminal.expect_screen("You said: hello")
            wait_until_idle(terminal)
            terminal.type("/regenerate\r")
            terminal.expect_screen("regenerating the answer to the last prompt")
            terminal.expect_screen("left the history")
            wait_until_idle(terminal)
            terminal.type("/edit @nope x\r")
            terminal.expect_screen("error: no prompt in this session's history has an id")
            terminal.type("/edit count to 3\r")
            terminal.expect_screen("on a new branch: session")
            terminal.expect_screen("assistant › 1 2 3")
            wait_until_idle(terminal)
            terminal.type("more\r")
            terminal.expect_screen("You said: more")
            wait_until_idle(terminal)
            terminal.type("\x04")
            assert terminal.wait() == 0
        finally:
            terminal.close()
        requests = server.requests
    assert len(requests) == 4
    assert [m["content"] for m in requests[1]["messages"]] == ["hello"]
    assert [m["content"] for m in requests[3]["messages"]] == ["count to 3", "1 2 3", "more"]
