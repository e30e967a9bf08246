"""``dsh chat --tools`` with a tool that requires approval: the call waits, is listed,
and ``/approve`` / ``/deny`` decide it, in the same chat or in a resumed one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.openai_server import FakeOpenAIServer, chat, fake_openai_server
from cli.runner import Dsh
from cli.test_chat import session_of
from cli.test_chat_terminal import start_chat

TOOLS = '''
from pathlib import Path

from dsh_agent import tool


@tool(requires_approval=True)
async def wipe(name: str) -> str:
    """Delete a file."""
    with Path("wiped.log").open("a") as log:
        log.write(name + "\\n")
    return f"wiped {name}"


TOOLS = [wipe]
'''
ASK = 'call wipe {"name": "notes.txt"}\n'


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with fake_openai_server() as running:
        yield running


@pytest.fixture
def tools(dsh: Dsh) -> Path:
    (dsh.cwd / "shop_tools.py").write_text(TOOLS)
    return dsh.cwd / "wiped.log"


def test_a_call_waits_until_approved_in_the_same_chat(
    dsh: Dsh, server: FakeOpenAIServer, tools: Path
) -> None:
    replies, notes, status = chat(
        dsh, server, ASK + "/approve call-1\n", "--tools", "shop_tools:TOOLS"
    )
    assert status == 0, notes
    assert "1 tool call(s) wait for approval: wipe" in notes and "[call call-1]" in notes
    assert "approved call call-1" in notes
    assert replies == "Tool said: wiped notes.txt\n"
    assert tools.read_text() == "notes.txt\n"  # ran once
    assert len(server.requests) == 2


def test_a_resumed_chat_lists_the_waiting_call_and_denies_it(
    dsh: Dsh, server: FakeOpenAIServer, tools: Path
) -> None:
    _, notes, status = chat(dsh, server, ASK, "--tools", "shop_tools:TOOLS")
    assert status == 0, notes
    session = session_of(notes)

    replies, notes, status = chat(
        dsh,
        server,
        "/deny call-9\n/deny call-1 keep it\n",
        "--tools",
        "shop_tools:TOOLS",
        "--session",
        session,
    )
    assert "wait for approval: wipe" in notes  # listed on resume
    assert "error: no tool call 'call-9' is waiting" in notes
    assert status == 1  # a refused decision line
    assert replies.startswith("Tool said: Error: the user denied this call of tool 'wipe': keep it")
    assert not tools.exists()  # never ran


def test_a_bad_tools_option_is_one_line(dsh: Dsh, server: FakeOpenAIServer) -> None:
    _, notes, status = chat(dsh, server, "hi\n", "--tools", "no_such_module:TOOLS")
    assert status == 1
    assert notes.startswith("dsh: error: --tools no_such_module:TOOLS: cannot import")


def test_the_terminal_asks_y_n_about_a_waiting_call(
    dsh: Dsh, server: FakeOpenAIServer, tools: Path
) -> None:
    terminal = start_chat(server, dsh.cwd, "--tools", "shop_tools:TOOLS")
    try:
        terminal.expect_screen("you ›")
        terminal.type(ASK.strip() + "\r")
        terminal.expect_screen('allow wipe {"name": "notes.txt"} [call call-1]? [y/n] ›')
        assert not tools.exists()
        terminal.type("y\r")
        terminal.expect_screen("Tool said: wiped notes.txt")
        terminal.type(ASK.strip() + "\r")
        terminal.expect_screen("[call call-3]? [y/n] ›")
        terminal.type("n not twice\r")
        terminal.expect_screen("denied call call-3")
        terminal.expect_screen("Tool said: Error: the user denied")
        terminal.type("\x04")
        assert terminal.wait() == 0
    finally:
        terminal.close()
    assert tools.read_text() == "notes.txt\n"  # once: approved, then denied
