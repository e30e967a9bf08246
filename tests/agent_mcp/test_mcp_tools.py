"""MCP servers over stdio and Streamable HTTP become dsh tools inside a real agent."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dsh_agent import AgentLoop, reconstruct_requests, run
from dsh_agent.mcp import STRUCTURED_META_KEY, McpTarget, McpToolset
from dsh_llm import TextBlock, create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, ToolResultEvent

from .conftest import HttpServer, stdio_target


def _call(name: str, arguments: dict[str, Any]) -> Any:
    return reply(tool_calls=[{"name": name, "arguments": arguments}])


async def _play(toolset: McpToolset, *calls: Any) -> tuple[Session, ScriptedAdapter]:
    """One turn: the model makes each call in turn, then answers."""
    session = Session.create()
    adapter = ScriptedAdapter([*calls, reply(text="done")])
    agent = AgentLoop(
        session=session, adapter=adapter, provider="scripted", model="m", tools=toolset.tools
    )
    await run(agent, create_user_message(content="go", source={"kind": "user"}))
    await agent.aclose()
    return session, adapter


def _results(session: Session) -> list[ToolResultEvent]:
    return [e for e in session.events if isinstance(e, ToolResultEvent)]


def _text(event: ToolResultEvent) -> str:
    (result,) = event.data.message.content
    return "".join(b.text for b in result.content if isinstance(b, TextBlock))


def _targets(http_server: HttpServer) -> dict[str, McpTarget]:
    return {"stdio": stdio_target(), "http": http_server.url}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_server_tools_run_in_a_turn_with_their_schemas_recorded(
    transport: str, http_server: HttpServer
) -> None:
    async with McpToolset(_targets(http_server)[transport], name_prefix="calc_") as toolset:
        names = {t.name for t in toolset.tools}
        assert {"calc_add", "calc_shout", "calc_refuse", "calc_die"} <= names
        add = next(t for t in toolset.tools if t.name == "calc_add")
        assert add.description == "Add two integers."
        assert tuple(add.parameters["required"]) == ("a", "b")
        session, adapter = await _play(
            toolset,
            _call("calc_add", {"a": 2, "b": 40}),
            _call("calc_refuse", {"reason": "not today"}),
        )

    added, refused = _results(session)
    assert _text(added) == "42"
    assert added.data.meta == {STRUCTURED_META_KEY: {"result": 42}}
    assert added.data.message.content[0].is_error is False
    # The server's error is an error result the model can act on, not a crash.
    assert refused.data.message.content[0].is_error is True
    assert refused.data.error is None
    # The offered MCP tools are in the log, so every request rebuilds exactly.
    rebuilt = reconstruct_requests(session.events)
    assert rebuilt == adapter.requests
    assert {t.name for t in rebuilt[0].tools or ()} == names


async def test_a_stdio_server_that_dies_mid_call_gives_an_error_result_then_reconnects() -> None:
    async with McpToolset(stdio_target()) as toolset:
        session, adapter = await _play(
            toolset, _call("pid", {}), _call("die", {}), _call("pid", {})
        )
        assert toolset.reconnects == 1
    first, died, second = _results(session)
    assert died.data.message.content[0].is_error is True
    assert died.data.error is not None and died.data.error.name == "McpConnectionLost"
    assert "may or may not have run" in _text(died)
    # The next call went to a new server process, launched by the reconnect.
    assert json.loads(_text(first)) != json.loads(_text(second))
    assert reconstruct_requests(session.events) == adapter.requests


async def test_an_http_server_that_dies_mid_call_gives_an_error_result_then_reconnects(
    http_server: HttpServer,
) -> None:
    async with McpToolset(http_server.url, connect_timeout=10) as toolset:
        session = Session.create()
        adapter = ScriptedAdapter(
            [
                *(_call("shout", {"text": "a"}), _call("die", {}), reply(text="paused")),
                *(_call("shout", {"text": "b"}), reply(text="down")),
                *(_call("shout", {"text": "c"}), reply(text="back")),
            ]
        )
        agent = AgentLoop(
            session=session, adapter=adapter, provider="s", model="m", tools=toolset.tools
        )
        await run(agent, create_user_message(content="go", source={"kind": "user"}))
        shouted, died = _results(session)
        assert _text(shouted) == "A"
        assert died.data.error is not None and died.data.error.name == "McpConnectionLost"

        # While the server is down a call fails cleanly; once it is back, it reconnects.
        assert http_server.process is not None
        http_server.process.wait(10)
        await run(agent, create_user_message(content="again", source={"kind": "user"}))
        assert _results(session)[-1].data.message.content[0].is_error is True

        http_server.start()
        await run(agent, create_user_message(content="once more", source={"kind": "user"}))
        assert _text(_results(session)[-1]) == "C"
        await agent.aclose()
    assert reconstruct_requests(session.events) == adapter.requests


async def test_cancelling_the_turn_cancels_a_running_call_and_the_server_stays_usable() -> None:
    async with McpToolset(stdio_target()) as toolset:
        session = Session.create()
        adapter = ScriptedAdapter(
            [_call("nap", {"seconds": 30}), _call("shout", {"text": "ok"}), reply(text="fine")]
        )
        agent = AgentLoop(
            session=session, adapter=adapter, provider="s", model="m", tools=toolset.tools
        )
        started = asyncio.Event()
        session.subscribe(lambda event: started.set() if event.type == "tool/call" else None)
        agent.followup(create_user_message(content="nap", source={"kind": "user"}))
        await asyncio.wait_for(started.wait(), 20)
        agent.cancel("user")
        await asyncio.wait_for(agent.when_idle(), 20)  # not 30 s: the call was cancelled
        (napped,) = _results(session)
        assert napped.data.error is not None and napped.data.error.code == "TOOL_CANCELLED"

        await run(agent, create_user_message(content="again", source={"kind": "user"}))
        assert _text(_results(session)[-1]) == "OK"
        assert toolset.reconnects == 0
        await agent.aclose()
    assert reconstruct_requests(session.events) == adapter.requests


async def test_a_server_that_cannot_start_is_a_clear_error() -> None:
    target = stdio_target()
    target.args = ["-c", "import sys; sys.exit(7)"]
    with pytest.raises(Exception, match="MCP server"):
        await McpToolset(target, connect_timeout=10).connect()


def test_tools_are_refused_before_connecting() -> None:
    with pytest.raises(RuntimeError, match="not connected"):
        McpToolset(stdio_target()).tools  # noqa: B018
