"""``dsh chat`` options and typed lines, piped: ``--tools`` naming something that is
not a tool, ``--deps`` for the tools' dependencies, ``--first-chunk-timeout`` for a
server that never answers, and ``/commands`` the chat does not know."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest
from providers.http_stub import unaccepting_port

from cli.openai_server import FakeOpenAIServer, chat, fake_openai_server
from cli.runner import DSH_COMMAND, Dsh

SHOP = '''
from dsh_agent import ToolContext, tool


class Shop:
    def __init__(self, name: str) -> None:
        self.name = name


def make_shop() -> Shop:
    return Shop("the corner shop")


async def open_shop() -> Shop:
    return Shop("the async shop")


def needs_a_name(name: str) -> Shop:
    return Shop(name)


@tool
async def shop_name(ctx: ToolContext[Shop]) -> str:
    """The shop's name."""
    return ctx.deps.name


def not_a_tool(city: str) -> str:
    """A plain function: not decorated with @tool."""
    return city


TOOLS = [shop_name]
MIXED = [shop_name, not_a_tool]
NUMBER = 3
'''


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with fake_openai_server() as running:
        yield running


@pytest.fixture
def shop(dsh: Dsh) -> None:
    (dsh.cwd / "shop.py").write_text(SHOP)


@pytest.mark.parametrize(
    ("spec", "what"),
    [
        ("shop:not_a_tool", "not_a_tool is a plain function"),
        ("shop:Shop", "Shop is the class Shop"),
        ("shop:NUMBER", "NUMBER is an int"),
        ("shop:MIXED", "MIXED holds a plain function"),
    ],
)
@pytest.mark.usefixtures("shop")
def test_tools_that_are_not_tools_are_one_line_saying_what_is_expected(
    dsh: Dsh, server: FakeOpenAIServer, spec: str, what: str
) -> None:
    replies, notes, status = chat(dsh, server, "hello\n", "--tools", spec)

    assert status == 1
    assert replies == ""
    assert "Traceback" not in notes
    (line,) = notes.splitlines()
    assert line == (
        f"dsh: error: --tools {spec}: {what}; expected a dsh tool (a function decorated "
        "with @tool) or a list or tuple of them"
    )
    assert server.requests == []


@pytest.mark.parametrize(
    ("factory", "name"), [("make_shop", "the corner shop"), ("open_shop", "the async shop")]
)
@pytest.mark.usefixtures("shop")
def test_deps_reach_the_tools(dsh: Dsh, server: FakeOpenAIServer, factory: str, name: str) -> None:
    replies, notes, status = chat(
        dsh, server, "call shop_name {}\n", "--tools", "shop:TOOLS", "--deps", f"shop:{factory}"
    )

    assert status == 0, notes
    assert replies == f"Tool said: {name}\n"


@pytest.mark.parametrize(
    ("spec", "what"),
    [
        ("shop:NUMBER", "NUMBER is an int; expected a function"),
        ("shop:needs_a_name", "needs_a_name(name: str) -> shop.Shop needs arguments"),
        ("shop", "--deps takes MODULE:NAME, not 'shop'"),
        ("shop:nothing", "module 'shop' has no 'nothing'"),
    ],
)
@pytest.mark.usefixtures("shop")
def test_bad_deps_are_one_line(dsh: Dsh, server: FakeOpenAIServer, spec: str, what: str) -> None:
    _, notes, status = chat(dsh, server, "hello\n", "--tools", "shop:TOOLS", "--deps", spec)

    assert status == 1
    (line,) = notes.splitlines()
    assert line.startswith("dsh: error: --deps ")
    assert what in line
    assert server.requests == []


def test_unknown_commands_are_refused_and_never_sent(dsh: Dsh, server: FakeOpenAIServer) -> None:
    replies, notes, status = chat(dsh, server, "/nosuch thing\n/Retry\n//usr is a folder\n")

    assert status == 1  # a refused line makes a script's exit status say so
    for command in ("/nosuch", "/Retry"):
        assert f"dsh: error: unknown command {command}; nothing was sent. the commands are " in (
            notes
        )
    assert "/inject TEXT, /retry, /regenerate, /edit [@ID] TEXT" in notes
    assert replies == "You said: /usr is a folder\n"  # `//` sends a leading slash
    (request,) = server.requests
    assert [m["content"] for m in request["messages"]] == ["/usr is a folder"]


def test_help_lists_the_commands_without_sending_anything(
    dsh: Dsh, server: FakeOpenAIServer
) -> None:
    _, notes, status = chat(dsh, server, "/help\n")

    assert status == 0, notes
    assert "dsh: the commands are /inject TEXT" in notes
    assert server.requests == []


class SilentServer:
    """Accepts connections on 127.0.0.1 and never answers a byte."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(connection)

    def close(self) -> None:
        self.listener.close()
        for connection in self.accepted:
            connection.close()


def test_first_chunk_timeout_gives_up_on_a_server_that_never_answers(dsh: Dsh) -> None:
    silent = SilentServer()
    argv = [*DSH_COMMAND, "chat", "--provider", "openai", "--model", "m"]
    argv += ["--base-url", silent.base_url, "--first-chunk-timeout", "0.5"]
    process = subprocess.Popen(
        argv,
        cwd=dsh.cwd,
        env=dsh.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdin is not None and process.stderr is not None
        process.stdin.write("hello\n")
        process.stdin.close()
        started = time.monotonic()
        line = process.stderr.readline()  # "new session ..."
        while "retry 1 of" not in line:
            line = process.stderr.readline()
            assert line, "the chat ended without a retry"
        waited = time.monotonic() - started
    finally:
        process.kill()
        process.wait()
        silent.close()
    assert line.startswith("dsh: TIMEOUT: ")
    assert waited < 10  # the default would wait 120 s


def test_connect_timeout_gives_up_on_a_connection_never_accepted(dsh: Dsh) -> None:
    with unaccepting_port() as port:
        line = _first_retry_line(dsh, port)
    assert line.startswith("dsh: TIMEOUT: ")
    assert "no connection within 0.5 s (connect_timeout)" in line


def _first_retry_line(dsh: Dsh, port: int) -> str:
    """The chat's first retry notice against a server on ``port``, with a 0.5 s
    connect timeout."""
    argv = [*DSH_COMMAND, "chat", "--provider", "openai", "--model", "m"]
    argv += ["--base-url", f"http://127.0.0.1:{port}/v1", "--connect-timeout", "0.5"]
    process = subprocess.Popen(
        argv,
        cwd=dsh.cwd,
        env=dsh.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdin is not None and process.stderr is not None
        process.stdin.write("hello\n")
        process.stdin.close()
        line = process.stderr.readline()  # "new session ..."
        while "retry 1 of" not in line:
            line = process.stderr.readline()
            assert line, "the chat ended without a retry"
    finally:
        process.kill()
        process.wait()
    return line


@pytest.mark.parametrize("flag", ["--first-chunk-timeout", "--connect-timeout"])
def test_timeouts_must_be_positive(dsh: Dsh, flag: str) -> None:
    for value in ("0", "-1", "inf", "soon"):
        result = dsh.run(*("chat", "--provider", "openai", "--model", "m"), *(flag, value))
        assert result.returncode == 2
        assert flag in result.stderr
