"""A real MCP server for the tests, written with the official SDK.

    python mcp_server.py stdio
    python mcp_server.py http PORT

``die`` ends the process in the middle of a call, like a server that crashes.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("dsh-test")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@server.tool()
def refuse(reason: str) -> str:
    """Always fails, with ``reason``."""
    raise ValueError(reason)


@server.tool()
def die() -> str:
    """End the server process in the middle of this call."""
    sys.stdout.flush()
    os._exit(3)


@server.tool()
async def nap(seconds: float) -> str:
    """Sleep, then say so."""
    await anyio.sleep(seconds)
    return "rested"


@server.tool()
def pid() -> int:
    """The server's process id (which process answered)."""
    return os.getpid()


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.settings.log_level = "WARNING"
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
