"""The serve-load bench's peer: pydantic-ai's AG-UI app over the same scripted replies.

``python bench/_serve_peer.py PORT`` serves, on 127.0.0.1, one route: ``POST /`` takes an
AG-UI ``RunAgentInput`` (the client holds the conversation and sends it whole, as
AG-UI clients do) and answers with the run's events over SSE, through
``AGUIAdapter.dispatch_request`` (what pydantic-ai's AG-UI docs mount). The model is a
``FunctionModel`` whose stream function yields the script's deltas at its pace
(``_serve_script``); Uvicorn runs with the same settings as ``dsh serve``
(``dsh_agent.web.run_server``). Prints ``serving`` once it listens.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator

from _serve_script import Script
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from dsh_agent.web import run_server


def _last_prompt(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def app(script: Script) -> Starlette:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        async for token in script.paced(_last_prompt(messages)):
            yield token

    agent = Agent(FunctionModel(stream_function=stream))

    async def run(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    return Starlette(routes=[Route("/", run, methods=["POST"])])


def main() -> None:
    port = int(sys.argv[1])

    def announce(url: str) -> None:
        print(f"pydantic-ai AG-UI app: serving at {url} (pid {os.getpid()})", flush=True)

    asyncio.run(run_server(app(Script.from_env()), port=port, ready=announce))


if __name__ == "__main__":
    main()
