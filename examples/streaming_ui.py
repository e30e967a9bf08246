"""Streaming a run to a UI over HTTP as AG-UI server-sent events, with no web framework.

The UI posts an AG-UI ``RunAgentInput`` whose last message is the user's, with the id
the UI chose; dsh keeps that id, and every id on the wire is dsh's own, so the UI can
key its elements by id and match them with the stored session after a reload.
Run: python examples/streaming_ui.py (a scripted model, so no key or network is needed).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from dsh_agent import Agent, AgentLoop, tool
from dsh_agent.streaming import SSE_MEDIA_TYPE, ag_ui_sse
from dsh_llm import UserMessage, freeze_message
from dsh_llm.testing import Response, ScriptedAdapter, reply
from dsh_session import Session
from dsh_session.stores import SqliteSessionStore


def user_message(ag_ui_message: dict[str, str]) -> UserMessage:
    """The UI's message as a dsh message, its id kept."""
    message = freeze_message(
        {
            "id": ag_ui_message["id"],
            "role": "user",
            "content": [{"type": "text", "text": ag_ui_message["content"]}],
            "source": {"kind": "user"},
        }
    )
    assert isinstance(message, UserMessage)
    return message


def chat_handler(
    agent: Agent,
) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    """An ``asyncio.start_server`` handler: one POST of a RunAgentInput per connection."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        run_input = json.loads(await reader.readexactly(length))
        message = user_message(run_input["messages"][-1])
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: " + SSE_MEDIA_TYPE.encode() + b"\r\n"
            b"Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
        )
        updates = agent.stream(message)
        async for line in ag_ui_sse(updates, thread_id=agent.id, run_id=run_input["runId"]):
            writer.write(line.encode())
            await writer.drain()
        writer.close()
        await writer.wait_closed()

    return handle


@tool
async def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


async def main() -> None:
    script: list[Response] = [
        reply(
            text="Let me check.", tool_calls=[{"name": "weather", "arguments": {"city": "Oslo"}}]
        ),
        "It is sunny in Oslo.",
    ]
    with tempfile.TemporaryDirectory() as directory:
        async with SqliteSessionStore(Path(directory) / "chat.db") as store:
            agent = AgentLoop(
                session=Session.create(),
                adapter=ScriptedAdapter(script),
                provider="test",
                model="scripted",
                tools=[weather],
                store=store,
            )
            server = await asyncio.start_server(chat_handler(agent), "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            run_input = {
                "threadId": agent.id,
                "runId": "run-1",
                "messages": [{"id": "ui-msg-1", "role": "user", "content": "Weather in Oslo?"}],
            }
            async with httpx.AsyncClient() as client:
                url = f"http://127.0.0.1:{port}/chat"
                async with client.stream("POST", url, json=run_input) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data: "):
                            event = json.loads(line[len("data: ") :])
                            ids = (event.get(key) for key in ("messageId", "toolCallId", "name"))
                            print(event["type"], next((i for i in ids if i), ""))
            server.close()
            await server.wait_closed()
            await agent.aclose()
        async with SqliteSessionStore(Path(directory) / "chat.db") as reopened:  # a reload
            stored = await reopened.load(agent.id)
    print("stored:", " ".join(message.id for message in stored.derive_messages()))


if __name__ == "__main__":
    asyncio.run(main())
