"""The AG-UI adapter: a conversation rendered from the wire matches the stored session
element by element, by id, after a reload from a real store."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

from dsh_agent import AgentLoop, tool
from dsh_agent.streaming import ag_ui_events, ag_ui_sse, reasoning_message_id
from dsh_llm import (
    AssistantMessage,
    BlockEndChunk,
    FinishChunk,
    LlmFailure,
    ReasoningBlock,
    StopFinish,
    StreamChunk,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    create_user_message,
)
from dsh_llm.testing import Response, ScriptedAdapter, reply
from dsh_session import Session
from dsh_session.stores import SqliteSessionStore

from .ag_ui_client import Rendered, parse_sse, render

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@tool
async def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


async def _serve_one_run(agent: AgentLoop, run_input: dict[str, Any]) -> str:
    """POST ``run_input`` to the example's handler on a real 127.0.0.1 server."""
    server = await asyncio.start_server(
        _example("streaming_ui").chat_handler(agent), "127.0.0.1", 0
    )
    port = server.sockets[0].getsockname()[1]
    try:
        async with httpx.AsyncClient() as client:
            response = await client.post(f"http://127.0.0.1:{port}/chat", json=run_input)
        assert response.headers["content-type"] == "text/event-stream"
        return response.text
    finally:
        server.close()
        await server.wait_closed()


def _assert_matches(rendered: Rendered, stored: Session) -> None:
    """Every stored message is on screen under its id with its content, and nothing
    else is (reasoning is the one derived id)."""
    expected: set[str] = set()
    for message in stored.derive_messages():
        shown = rendered.messages[message.id]
        expected.add(message.id)
        if isinstance(message, ToolResultMessage):
            block = message.content[0]
            assert shown["role"] == "tool"
            assert shown["toolCallId"] == block.call_id
            assert shown["content"] == "".join(
                b.text for b in block.content if isinstance(b, TextBlock)
            )
        elif isinstance(message, UserMessage):
            assert shown["role"] == "user"
            assert shown["content"] == "".join(
                b.text for b in message.content if isinstance(b, TextBlock)
            )
        else:
            assert isinstance(message, AssistantMessage)
            blocks = message.content
            assert shown["content"] == "".join(b.text for b in blocks if isinstance(b, TextBlock))
            calls = [b for b in blocks if isinstance(b, ToolCallBlock)]
            assert shown.get("toolCalls", []) == [
                {"id": c.call_id, "name": c.name, "arguments": c.arguments} for c in calls
            ]
            reasoning = "".join(b.text for b in blocks if isinstance(b, ReasoningBlock))
            if reasoning:
                rid = reasoning_message_id(message.id)
                assert rendered.messages[rid] == {
                    "id": rid,
                    "role": "reasoning",
                    "content": reasoning,
                }
                expected.add(rid)
    assert set(rendered.messages) == expected


async def test_a_rendered_conversation_matches_the_reloaded_session_by_id(
    tmp_path: Path,
) -> None:
    script: list[Response] = [
        reply(
            reasoning="The user wants weather.",
            text="Let me check.",
            tool_calls=[{"call_id": "c1", "name": "weather", "arguments": {"city": "Oslo"}}],
        ),
        "It is sunny in Oslo.",
        "You are welcome.",
    ]
    database = tmp_path / "chat.db"
    async with SqliteSessionStore(database) as store:
        agent = AgentLoop(
            session=Session.create(),
            adapter=ScriptedAdapter(script, delay=0.001),  # deltas arrive one by one
            provider="test",
            model="scripted",
            tools=[weather],
            store=store,
        )
        rendered = Rendered()
        for run_id, (message_id, text) in enumerate(
            [("ui-1", "Weather in Oslo?"), ("ui-2", "Thanks!")]
        ):
            run_input = {
                "threadId": agent.id,
                "runId": f"run-{run_id}",
                "messages": [{"id": message_id, "role": "user", "content": text}],
            }
            events = parse_sse(await _serve_one_run(agent, run_input))
            assert events[0] == {
                "type": "RUN_STARTED",
                "threadId": agent.id,
                "runId": f"run-{run_id}",
            }
            assert events[-1]["type"] == "RUN_FINISHED"
            for shown in render(events).messages.values():
                rendered.new(shown["id"], **shown)  # refuses an id seen in an earlier run
        await agent.aclose()

    async with SqliteSessionStore(database) as reopened:
        stored = await reopened.load(agent.id)
    assert stored.derive_messages()[0].id == "ui-1"  # the UI's own id, kept
    _assert_matches(rendered, stored)
    assert len(rendered.messages) == 7  # 2 user, 3 assistant, 1 reasoning, 1 tool


async def test_whole_block_answers_render_and_a_failed_call_ends_in_run_error() -> None:
    whole_blocks: list[StreamChunk] = [
        BlockEndChunk(index=0, block=TextBlock(text="All at once.")),
        FinishChunk(reason=StopFinish()),
    ]
    failure = LlmFailure(message="overloaded", code="SERVER")
    agent = AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([whole_blocks, failure]),
        provider="test",
        model="scripted",
        retry=None,  # the failure ends its turn at once
    )
    first = create_user_message(content="hi", source={"kind": "user"})
    updates = [u async for u in agent.stream(first)]
    rendered = render(list(ag_ui_events(updates, thread_id=agent.id, run_id=first.id)))
    _assert_matches(rendered, agent.session)

    second = create_user_message(content="again", source={"kind": "user"})
    lines = [line async for line in ag_ui_sse(agent.stream(second), thread_id=agent.id, run_id="r")]
    events = parse_sse("".join(lines))
    assert events[-1] == {"type": "RUN_ERROR", "message": "overloaded", "code": "SERVER"}
    failed = [e for e in events if e["type"] == "CUSTOM" and e["name"] == "dsh.message-failed"]
    assert len(failed) == 1 and failed[0]["value"]["code"] == "SERVER"
    # The failed message's id is not in the log: a UI drops what it drew under it.
    assert agent.session.surface_seq_of(failed[0]["value"]["messageId"]) is None
    await agent.aclose()
