"""Agent factories for service tests, importable by worker child processes
(``module:factory``): scripted models, no network."""

from __future__ import annotations

import asyncio

from dsh_agent import AgentLoop, tool
from dsh_llm import GenerateRequest, UserMessage
from dsh_llm.testing import FunctionAdapter, Reply, reply
from dsh_session import Session
from dsh_session.stores import SessionStore


def _last_user_text(request: GenerateRequest) -> str:
    for message in reversed(request.messages):
        if isinstance(message, UserMessage):
            block = message.content[0]
            return str(getattr(block, "text", ""))
    return ""


def echo(session: Session, store: SessionStore) -> AgentLoop:
    """Answers ``echo: <the last user text>``."""
    adapter = FunctionAdapter(lambda request: f"echo: {_last_user_text(request)}")
    return AgentLoop(
        session=session, adapter=adapter, store=store, provider="test", model="scripted"
    )


async def _slow(request: GenerateRequest) -> str:
    await asyncio.sleep(0.3)
    return f"slow: {_last_user_text(request)}"


def slow(session: Session, store: SessionStore) -> AgentLoop:
    """Takes 0.3 s per answer, so a test can act while a turn runs."""
    return AgentLoop(
        session=session,
        adapter=FunctionAdapter(_slow),
        store=store,
        provider="test",
        model="scripted",
    )


@tool(requires_approval=True)
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def _tool_then_answer(request: GenerateRequest) -> str | Reply:
    last = request.messages[-1]
    if isinstance(last, UserMessage):
        return reply(tool_calls=[{"name": "lookup", "arguments": {"key": "k"}}])
    return "done"


def asks_approval(session: Session, store: SessionStore) -> AgentLoop:
    """Calls ``lookup`` once per prompt, which waits for a person's approval."""
    return AgentLoop(
        session=session,
        adapter=FunctionAdapter(_tool_then_answer),
        store=store,
        provider="test",
        model="scripted",
        tools=[lookup],
    )


@tool
async def pause(seconds: float) -> str:
    """Wait ``seconds`` (a tool that keeps a turn running)."""
    await asyncio.sleep(seconds)
    return f"waited {seconds}"


def _pause_then_answer(request: GenerateRequest) -> str | Reply:
    last = request.messages[-1]
    if isinstance(last, UserMessage) and _last_user_text(request).startswith("pause"):
        return reply(tool_calls=[{"name": "pause", "arguments": {"seconds": 1.5}}])
    seen = [_text(m) for m in request.messages if isinstance(m, UserMessage)]
    return "saw: " + " | ".join(seen)


def _text(message: UserMessage) -> str:
    return str(getattr(message.content[0], "text", ""))


def pausing(session: Session, store: SessionStore) -> AgentLoop:
    """A prompt starting with ``pause`` runs a 1.5 s tool; every answer lists the user
    texts the request held (so a test sees where a steer entered)."""
    return AgentLoop(
        session=session,
        adapter=FunctionAdapter(_pause_then_answer),
        store=store,
        tools=[pause],
        provider="test",
        model="scripted",
    )
