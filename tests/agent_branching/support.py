"""Helpers for branching tests: prompts, agents over real stores, and the checks every
branch must pass (one id once on the surface, requests rebuilt from the log)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dsh_agent import AgentLoop, reconstruct_requests
from dsh_llm import (
    GenerateRequest,
    Message,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMessage,
    create_user_message,
)
from dsh_session import Session, SessionEvent
from dsh_session._surface_view import message_of


def prompt(text: str) -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def agent_over(session: Session, adapter: Any, **options: Any) -> AgentLoop:
    options.setdefault("provider", "test")
    options.setdefault("model", "test-model")
    options.setdefault("check_requests", True)
    return AgentLoop(session=session, adapter=adapter, **options)


async def say(agent: AgentLoop, text: str) -> UserMessage:
    message = prompt(text)
    agent.followup(message)
    await agent.when_idle()
    return message


def texts(messages: Sequence[Message]) -> list[str]:
    """Each message's text (tool calls as ``call:NAME``, results as ``result:TEXT``)."""
    out = []
    for message in messages:
        parts = []
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolCallBlock):
                parts.append(f"call:{block.name}")
            elif isinstance(block, ToolResultBlock):
                inner = (b.text for b in block.content if isinstance(b, TextBlock))
                parts.append("result:" + "".join(inner))
        out.append(" ".join(parts))
    return out


def ids(messages: Sequence[Message]) -> list[str]:
    return [message.id for message in messages]


def logged_ids(events: Sequence[SessionEvent]) -> set[str]:
    """Every message id the raw log holds (shadowed ones included)."""
    found = (message_of(event) for event in events)
    return {message.id for message in found if message is not None}


def check_surface(session: Session) -> None:
    """Derived history holds each id once, and the whole log validates from scratch."""
    history = ids(session.derive_messages())
    assert len(history) == len(set(history)), history
    reloaded = Session.from_log(session.header, session.events)
    assert ids(reloaded.derive_messages()) == history


def check_requests(session: Session, received: Sequence[GenerateRequest]) -> None:
    """What the adapter received is what the log rebuilds."""
    assert reconstruct_requests(session.events) == list(received)
