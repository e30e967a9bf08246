"""The scripted agent the browser tests chat with (``module:factory`` for ``dsh serve``):
replies stream word by word slowly enough to act mid-reply, a prompt starting with
``pause`` runs a tool first, and one starting with ``look up`` calls a tool that needs a
person's approval. No network."""

from __future__ import annotations

import asyncio

from dsh_agent import AgentLoop, tool
from dsh_llm import GenerateRequest, TextBlock, ToolResultMessage, UserMessage, UserSource
from dsh_llm.testing import FunctionAdapter, Reply, reply
from dsh_session import Session
from dsh_session.stores import SessionStore

WORD_DELAY = 0.06
"""Seconds before each streamed word."""

FILLER = "one two three four five six seven eight nine ten eleven twelve."
"""What every plain answer ends with: enough words to watch it grow."""


@tool(requires_approval=True)
def lookup(key: str) -> str:
    """Look a key up (a person approves each call)."""
    return f"value of {key}"


@tool
async def pause(seconds: float) -> str:
    """Wait ``seconds``: a step that keeps the turn running."""
    await asyncio.sleep(seconds)
    return f"waited {seconds}"


def _text(message: UserMessage | ToolResultMessage) -> str:
    if isinstance(message, ToolResultMessage):
        blocks = message.content[0].content
    else:
        blocks = message.content
    return " ".join(block.text for block in blocks if isinstance(block, TextBlock))


def _script(request: GenerateRequest) -> Reply:
    last = request.messages[-1]
    prompts = [
        _text(m)
        for m in request.messages
        if isinstance(m, UserMessage) and isinstance(m.source, UserSource)
    ]
    if isinstance(last, ToolResultMessage) and not _text(last).startswith("waited"):
        return reply(text=f"The lookup said: {_text(last)}")
    if isinstance(last, UserMessage) and prompts[-1].startswith("look up "):
        key = prompts[-1].removeprefix("look up ")
        return reply(tool_calls=[{"name": "lookup", "arguments": {"key": key}}])
    if isinstance(last, UserMessage) and prompts[-1].startswith("pause"):
        return reply(tool_calls=[{"name": "pause", "arguments": {"seconds": 0.8}}])
    return reply(text=f"You said: {' | '.join(prompts)}. {FILLER}")


def chat(session: Session, store: SessionStore) -> AgentLoop:
    return AgentLoop(
        session=session,
        adapter=FunctionAdapter(_script, delay=WORD_DELAY),
        store=store,
        provider="test",
        model="scripted",
        tools=[lookup, pause],
    )
