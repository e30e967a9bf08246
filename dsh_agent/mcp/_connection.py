"""One live connection to an MCP server, owned by a task of its own.

The MCP client keeps anyio task groups open for the life of a connection; they must be
entered and left by one task, and when the server goes away they cancel whatever runs
inside them. So the connection lives in a dedicated task, and tool calls are handed to
it through a queue and answered through futures: a caller never receives a stray
cancellation, it gets :class:`McpConnectionLost` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import CONNECTION_CLOSED, CallToolResult, Tool

from dsh_agent.errors import McpConnectionLost, McpConnectTimeoutError
from dsh_llm._failure import describe_exception

McpTarget = StdioServerParameters | str
"""A command to launch and talk to over stdio, or the URL of a Streamable HTTP server."""


@dataclass(eq=False)  # kept in a set by identity
class _Call:
    name: str
    arguments: dict[str, Any]
    timeout: float | None
    answer: asyncio.Future[CallToolResult]
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class McpConnection:
    """Connects once (:meth:`open`), serves calls until :meth:`close` or until the server
    goes away; a lost connection is not reopened here (the toolset does that)."""

    def __init__(self, target: McpTarget, describe: str) -> None:
        self._target = target
        self._describe = describe
        self._calls: asyncio.Queue[_Call | None] = asyncio.Queue()
        self._pending: set[_Call] = set()
        self._task: asyncio.Task[None] | None = None
        self._serving = False
        """Connected and reading ``_calls`` (where :meth:`close` puts its stop signal)."""
        self._closed = False

    @property
    def alive(self) -> bool:
        """Whether calls can still be sent (opened, not closed, server not gone)."""
        return self._task is not None and not self._task.done() and not self._closed

    async def open(self, timeout: float) -> list[Tool]:
        """Connect and list every tool the server offers (all pages)."""
        listed: asyncio.Future[list[Tool]] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(listed), name=f"mcp {self._describe}")
        try:
            return await asyncio.wait_for(asyncio.shield(listed), timeout)
        except TimeoutError:
            await self._abandon(listed)
            raise McpConnectTimeoutError(
                f"MCP server {self._describe} did not answer initialize and list its tools "
                f"within connect_timeout={timeout} s",
                server=self._describe,
                timeout=timeout,
            ) from None
        except BaseException:
            await self._abandon(listed)
            raise

    async def _abandon(self, listed: asyncio.Future[list[Tool]]) -> None:
        """Close a connection that did not open; nobody will read ``listed`` now."""
        listed.add_done_callback(_consume)
        await self.close()

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        timeout: float | None,
        cancelled: asyncio.Event,
    ) -> CallToolResult:
        """Run one tool call on the server. When ``cancelled`` is set (the turn was
        cancelled) or the caller is cancelled, the call is cancelled on the server and
        ``asyncio.CancelledError`` is raised."""
        if not self.alive:
            raise McpConnectionLost(f"the connection to MCP server {self._describe} is closed")
        call = _Call(name, arguments, timeout, asyncio.get_running_loop().create_future())
        self._calls.put_nowait(call)
        stop = asyncio.ensure_future(cancelled.wait())
        try:
            await asyncio.wait((call.answer, stop), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not call.answer.done():
                call.scope.cancel()
                call.answer.add_done_callback(_consume)  # nobody waits for it any more
        if not call.answer.done():
            raise asyncio.CancelledError
        return call.answer.result()

    async def close(self) -> None:
        """Stop serving; calls still in flight end with :class:`McpConnectionLost`."""
        self._closed = True
        self._calls.put_nowait(None)
        if self._task is not None and not self._serving:
            self._task.cancel()  # still connecting: it never reads the stop signal
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._task, 10)

    async def _serve(self, listed: asyncio.Future[list[Tool]]) -> None:
        reason: BaseException | None = None
        try:
            async with Client(self._target) as client, anyio.create_task_group() as group:
                listed.set_result(await _list_tools(client))
                self._serving = True
                while (call := await self._calls.get()) is not None:
                    self._pending.add(call)
                    group.start_soon(self._run, client, call)
                group.cancel_scope.cancel()
        except BaseException as error:  # the server went away, or refused to start
            reason = error
        finally:
            self._closed = True
            lost = McpConnectionLost(
                f"the connection to MCP server {self._describe} closed"
                + (f" ({_summary(reason)})" if reason is not None else "")
            )
            if not listed.done():
                listed.set_exception(lost)
            for call in self._pending:
                if not call.answer.done():
                    call.answer.set_exception(lost)
            self._pending.clear()
            while not self._calls.empty():
                queued = self._calls.get_nowait()
                if queued is not None and not queued.answer.done():
                    queued.answer.set_exception(lost)

    async def _run(self, client: Client, call: _Call) -> None:
        try:
            with call.scope:
                result = await client.call_tool(
                    call.name, call.arguments, read_timeout_seconds=call.timeout
                )
                if not call.answer.done():
                    call.answer.set_result(result)
        except MCPError as error:
            failure: Exception = error
            if error.code == CONNECTION_CLOSED:  # the server went away during the call
                self._closed = True
                self._calls.put_nowait(None)
                failure = McpConnectionLost(f"the connection to MCP server {self._describe} closed")
            if not call.answer.done():
                call.answer.set_exception(failure)
        except Exception as error:
            if not call.answer.done():
                call.answer.set_exception(error)
        finally:
            self._pending.discard(call)
            if not call.answer.done():  # cancelled: by its caller, or by the connection
                call.answer.set_exception(
                    McpConnectionLost(f"the call to {call.name!r} was cancelled")
                )


def _consume(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled():
        answer.exception()


async def _list_tools(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools


def _summary(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return describe_exception(error)


__all__ = [
    "McpConnection",
    "McpTarget",
]
