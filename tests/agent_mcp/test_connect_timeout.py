"""Issue 34 #10: ``McpToolset(connect_timeout=...)`` is honoured. A real stdio server
that reads ``initialize`` and never answers made ``connect()`` give up only after
~11.5 s (``close()`` waited 10 s on a task that never read its stop signal) with an
empty ``TimeoutError`` and a "Future exception was never retrieved" warning. It must
give up at the timeout with a dsh error naming it, and leave nothing behind."""

from __future__ import annotations

import asyncio
import gc
import sys
import time
from typing import Any

import pytest

from dsh_agent import AgentError, McpConnectTimeoutError
from dsh_agent.mcp import McpToolset, StdioServerParameters

SILENT_SERVER = (
    "import sys\n"
    "for line in sys.stdin:\n"  # reads every request, answers none
    "    pass\n"
)


async def test_a_server_that_never_answers_initialize_times_out_at_connect_timeout() -> None:
    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: unhandled.append(context))
    target = StdioServerParameters(command=sys.executable, args=["-c", SILENT_SERVER])
    started = time.monotonic()
    try:
        with pytest.raises(McpConnectTimeoutError) as raised:
            await McpToolset(target, connect_timeout=1.5).connect()
        elapsed = time.monotonic() - started
        error = raised.value
        facts = (isinstance(error, AgentError), isinstance(error, TimeoutError), error.timeout)
        message = str(error)
        del raised, error  # its traceback holds the connection's frames
        await asyncio.sleep(0.1)
        gc.collect()  # a never-retrieved future exception is reported when collected
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)

    assert 1.4 <= elapsed < 2.5, elapsed
    assert facts == (True, True, 1.5)
    assert "connect_timeout=1.5 s" in message and "initialize" in message
    assert [context.get("message") for context in unhandled] == []
