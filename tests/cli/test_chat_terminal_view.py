"""What ``dsh chat`` shows at a terminal: a steer typed while a reply streams leaves
that reply whole under its one label, a resumed chat first shows its last exchanges,
and an unknown ``/command`` is refused on the spot. Checked on the emulated screen."""

from __future__ import annotations

from pathlib import Path

from cli.openai_server import chat, fake_openai_server
from cli.runner import Dsh
from cli.test_chat import session_of
from cli.test_chat_terminal import PROMPT, start_chat, wait_until_idle

COUNT = " ".join(str(number) for number in range(1, 31))


def test_a_steer_mid_stream_leaves_one_reply_under_one_label(tmp_path: Path) -> None:
    with fake_openai_server(delay=0.1) as server:
        terminal = start_chat(server, tmp_path)
        try:
            terminal.expect_screen(PROMPT)
            terminal.type("count to 30\r")
            terminal.expect_screen("assistant › 1 2 3")
            terminal.type("and this too\r")
            terminal.expect_screen("steering the running turn")
            terminal.expect_screen("assistant › You said: and this too")
            wait_until_idle(terminal)
            terminal.type("/exit\r")
            assert terminal.wait() == 0
        finally:
            terminal.close()
    screen = terminal.screen()
    replies = [line for line in screen if line.startswith("assistant ›")]
    assert replies == [f"assistant › {COUNT}", "assistant › You said: and this too"], screen
    note = screen.index("  (steering the running turn)")
    assert note < screen.index(f"assistant › {COUNT}")  # said above the streaming reply


def test_a_resumed_chat_shows_its_last_exchanges(dsh: Dsh) -> None:
    with fake_openai_server() as server:
        _, notes, status = chat(dsh, server, "".join(f"prompt {n}\n" for n in range(1, 5)))
        assert status == 0, notes
        session_id = session_of(notes)
        terminal = start_chat(server, dsh.cwd, "--session", session_id[:13])
        try:
            terminal.expect_screen(f"resumed session {session_id}: 4 turns, 8 messages")
            terminal.expect_screen(PROMPT)
            # What is printed above the prompt lands on the screen in the prompt's next
            # redraw, which can come a moment after the prompt: the help text is last.
            terminal.expect_screen("Type a message and press Enter")
            screen = "\n".join(terminal.screen())
            terminal.type("/exit\r")
            assert terminal.wait() == 0
        finally:
            terminal.close()
    assert f"the last 3 exchange(s) of session {session_id}" in screen
    for n in (2, 3, 4):
        assert f"prompt {n}" in screen
        assert f"You said: prompt {n}" in screen
    assert "prompt 1" not in screen  # only the last few
    assert screen.index("You said: prompt 4") < screen.index("Type a message and press Enter")


def test_an_unknown_command_is_refused_at_the_terminal(tmp_path: Path) -> None:
    with fake_openai_server() as server:
        terminal = start_chat(server, tmp_path)
        try:
            terminal.expect_screen(PROMPT)
            terminal.type("/regenrate\r")
            line = terminal.expect_screen("unknown command /regenrate")
            terminal.type("/exit\r")
            assert terminal.wait() == 0
        finally:
            terminal.close()
        assert server.requests == []
    assert "nothing was sent" in line
    assert "/regenerate" in "\n".join(terminal.screen())
