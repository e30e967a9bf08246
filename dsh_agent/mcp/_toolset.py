"""MCP servers as dsh tools: :class:`McpToolset`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

from mcp import StdioServerParameters
from mcp.types import Tool as McpTool

from dsh_agent.errors import McpConnectionLost
from dsh_agent.mcp._connection import McpConnection, McpTarget
from dsh_agent.mcp._results import tool_output
from dsh_agent.tools import Tool, ToolContext, ToolReturn


class McpToolset:
    """The tools of one MCP server (a stdio command or a Streamable HTTP URL).

    ``async with McpToolset(target) as mcp:`` connects and lists the server's tools once;
    ``mcp.tools`` are ordinary dsh :class:`Tool` values to pass to ``AgentLoop(tools=...)``,
    so the offered schemas are recorded in the request header like any others. A call
    whose connection was lost before it started reconnects first (and lists the tools
    again); a call in flight when the server goes away ends as an error result saying
    its outcome is unknown — it is never sent twice. Cancelling the turn cancels the
    call on the server.
    """

    def __init__(
        self,
        target: McpTarget,
        *,
        name_prefix: str = "",
        connect_timeout: float = 30.0,
        call_timeout: float | None = None,
    ) -> None:
        self._target = target
        self._prefix = name_prefix
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._describe = (
            " ".join([target.command, *target.args])
            if isinstance(target, StdioServerParameters)
            else target
        )
        self._connection: McpConnection | None = None
        self._reconnecting = asyncio.Lock()
        self._tools: tuple[Tool, ...] = ()
        self.reconnects = 0
        """How many times a lost connection was opened again."""

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The server's tools as listed when the toolset connected."""
        if self._connection is None:
            raise RuntimeError("the MCP toolset is not connected: use 'async with' or connect()")
        return self._tools

    async def connect(self) -> Self:
        """Connect and list the tools (what ``async with`` does)."""
        listing = await self._open()
        self._tools = tuple(self._tool(listed) for listed in listing)
        return self

    async def aclose(self) -> None:
        """Close the connection; later calls of its tools reconnect."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()

    async def __aenter__(self) -> Self:
        return await self.connect()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _open(self) -> list[McpTool]:
        connection = McpConnection(self._target, self._describe)
        listing = await connection.open(self._connect_timeout)
        self._connection = connection
        return listing

    async def _live(self) -> McpConnection:
        """The open connection, reopened once if the server went away since."""
        async with self._reconnecting:
            connection = self._connection
            if connection is not None and connection.alive:
                return connection
            await self._open()
            self.reconnects += 1
            assert self._connection is not None
            return self._connection

    def _tool(self, listed: McpTool) -> Tool:
        remote = listed.name

        async def call(arguments: dict[str, Any], context: ToolContext) -> ToolReturn:
            connection = await self._live()
            try:
                result = await connection.call(
                    remote, arguments, self._call_timeout, context.cancelled
                )
            except McpConnectionLost as lost:
                raise McpConnectionLost(
                    f"{lost}; the call to {remote!r} may or may not have run on the server"
                ) from None
            return tool_output(result)

        schema: Mapping[str, Any] = listed.input_schema or {"type": "object"}
        return Tool(
            name=self._prefix + remote,
            description=listed.description or listed.title or "",
            parameters=schema,
            handler=call,
        )


__all__ = [
    "McpToolset",
]
