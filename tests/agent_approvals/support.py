"""Tools that count their runs, and agents over them, for the approval tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dsh_agent import AgentLoop, ApprovalPolicy, Tool, tool
from dsh_llm import UserMessage, create_user_message
from dsh_llm.testing import Response, ScriptedAdapter, reply
from dsh_session import Session, SessionEvent, ToolResultEvent


class Workshop:
    """``look`` runs freely, ``delete`` and ``deploy`` need approval; ``runs`` lists
    every tool run in order, as ``name:argument``."""

    def __init__(self) -> None:
        self.runs: list[str] = []

        @tool
        async def look(path: str) -> str:
            """Read a path."""
            self.runs.append(f"look:{path}")
            return f"contents of {path}"

        @tool(requires_approval=True)
        async def delete(path: str) -> str:
            """Delete a path."""
            self.runs.append(f"delete:{path}")
            return f"deleted {path}"

        @tool(requires_approval=True)
        async def deploy(version: str) -> str:
            """Deploy a version."""
            self.runs.append(f"deploy:{version}")
            return f"deployed {version}"

        self.tools: tuple[Tool, ...] = (look, delete, deploy)

    def agent(
        self,
        responses: Sequence[Response],
        *,
        session: Session | None = None,
        approval: ApprovalPolicy | None = None,
    ) -> tuple[AgentLoop, ScriptedAdapter]:
        adapter = ScriptedAdapter(responses)
        agent = AgentLoop(
            session=session or Session.create(),
            adapter=adapter,
            provider="test",
            model="scripted",
            tools=self.tools,
            approval=approval,
        )
        return agent, adapter


def calls(*specs: tuple[str, str, dict[str, Any]]) -> Response:
    """A reply requesting ``(call id, tool name, arguments)`` calls, in order."""
    return reply(
        tool_calls=[{"call_id": cid, "name": name, "arguments": args} for cid, name, args in specs]
    )


def prompt(text: str) -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def results(events: Sequence[SessionEvent]) -> dict[str, ToolResultEvent]:
    """The tool results of a log, by call id."""
    return {
        event.data.message.source.call_id: event
        for event in events
        if isinstance(event, ToolResultEvent)
    }


def result_text(event: ToolResultEvent) -> str:
    (block,) = event.data.message.content
    (text,) = block.content
    return str(getattr(text, "text", text))
