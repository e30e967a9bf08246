"""Issue 34 #11: AG-UI over SSE read the way ``examples/streaming_ui.py`` reads it
(``httpx`` ``aiter_lines`` + ``json.loads``). ``aiter_lines`` splits like
``str.splitlines``, so a raw U+2028, U+2029 or U+0085 inside an event's JSON cut the
event into unreadable halves. Each event's JSON escapes them (``\\u2028`` ...), so
every ``data:`` line is one whole event and the text arrives intact."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import httpx

from dsh_agent import AgentLoop, tool
from dsh_llm.testing import Response, ScriptedAdapter, reply
from dsh_session import Session

from .ag_ui_client import render

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "streaming_ui.py"
SEPARATORS = "\u2028\u2029\x85"
TEXT = "line\u2028sep, para\u2029sep, next\x85line: all three \u2028\u2029\x85 in one event"


@tool
async def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


def _chat_handler(agent: AgentLoop) -> Any:
    spec = importlib.util.spec_from_file_location("example_streaming_ui_i34", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.chat_handler(agent)


async def test_line_separators_never_split_an_event_read_by_aiter_lines() -> None:
    script: list[Response] = [
        reply(
            text=TEXT, tool_calls=[{"call_id": "c1", "name": "echo", "arguments": {"text": TEXT}}]
        ),
        TEXT,
    ]
    agent = AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter(script),
        provider="test",
        model="scripted",
        tools=[echo],
    )
    server = await asyncio.start_server(_chat_handler(agent), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    run_input = {
        "threadId": agent.id,
        "runId": "run-1",
        "messages": [{"id": "ui-msg-1", "role": "user", "content": f"say {TEXT}"}],
    }
    lines: list[str] = []
    try:
        async with httpx.AsyncClient() as client:
            url = f"http://127.0.0.1:{port}/chat"
            async with client.stream("POST", url, json=run_input) as response:
                lines = [line async for line in response.aiter_lines()]
    finally:
        server.close()
        await server.wait_closed()
        await agent.aclose()

    # Every non-blank line is one whole event: nothing else between the data lines.
    assert [line for line in lines if line and not line.startswith("data: ")] == []
    events = [json.loads(line[len("data: ") :]) for line in lines if line]
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    # The wire holds none of the separators raw, and the decoded text is intact.
    assert not any(separator in line for line in lines for separator in SEPARATORS)
    rendered = render(events)
    shown = [m["content"] for m in rendered.messages.values()]
    assert shown.count(TEXT) == 2  # both assistant answers, exactly
    assert f"say {TEXT}" in shown and f"echo: {TEXT}" in shown
    [call] = [c for m in rendered.messages.values() for c in m.get("toolCalls", [])]
    assert json.loads(call["arguments"]) == {"text": TEXT}


def test_the_example_reads_lines_with_aiter_lines() -> None:
    # The reader this test imitates is the example's own.
    assert "aiter_lines()" in EXAMPLE.read_text() and "json.loads" in EXAMPLE.read_text()
