"""Sub-agents as tools: :func:`agent_tool`.

The child runs in a session of its own, on the parent's store, whose header carries
the TypeScript harness's delegation fields (``parentSession``, ``origin: "subagent"``,
``delegationDepth``); the delegated prompt's source names the parent session and the
delegating call (``parentCallId``: the harness's header has no field for it, and its
SQLite schema keeps only the fields it has), and the parent's ``tool/result`` names
the child in its ``meta`` (``childSession``), so each log links to the other. See
docs/decisions/2026-12-06-sub-agents.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from dsh_agent._engine.loop import AgentLoop
from dsh_agent._engine.run import run
from dsh_agent._tool_context import ToolContext
from dsh_agent.errors import AgentError, DelegationDepthError, ToolArgumentsError
from dsh_agent.tools import Tool, ToolOutput
from dsh_llm._create import create_user_message
from dsh_session._header import SessionHeader, new_session_id, now_ms
from dsh_session._session import Session

DEFAULT_MAX_DEPTH = 3
"""How deep a chain of delegations may go by default (a top-level agent is depth 0)."""

ChildFactory = Callable[[Session], AgentLoop]
"""Builds the child agent over the session :func:`agent_tool` created for it."""

_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {"prompt": {"type": "string", "description": "The task for the agent."}},
    "required": ["prompt"],
    "additionalProperties": False,
}


def agent_tool(
    child_factory: ChildFactory,
    *,
    name: str,
    description: str,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Tool:
    """A tool that delegates its ``prompt`` to a child agent and returns the child's
    final answer as its result.

    Each call creates a child session (its header names the parent session and the
    child's ``delegationDepth``), builds the child with ``child_factory(session)`` —
    which must put it on the parent's store — and runs the prompt to the end. The
    child inherits cancellation (a cancelled parent turn cancels the child with cause
    ``parent``). A child deeper than ``max_depth`` is refused with
    :class:`~dsh_agent.DelegationDepthError` before anything is created."""
    if type(max_depth) is not int or max_depth < 1:
        raise ValueError(f"max_depth must be an int >= 1, not {max_depth!r}")

    async def delegate(arguments: Mapping[str, Any], context: ToolContext) -> ToolOutput:
        prompt = arguments.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ToolArgumentsError("'prompt' must be a non-empty string")
        parent = context.agent
        if not isinstance(parent, AgentLoop):
            raise AgentError(f"the sub-agent tool {name!r} runs only inside an AgentLoop")
        depth = delegation_depth(parent.session.header) + 1
        if depth > max_depth:
            raise DelegationDepthError(
                f"the sub-agent tool {name!r} refused to delegate: the child would be at "
                f"depth {depth}, over the limit of {max_depth}",
                depth=depth,
                max_depth=max_depth,
            )
        child = _build_child(child_factory, parent, depth)
        try:
            prompt_message = create_user_message(
                prompt,
                source={
                    "kind": "user",
                    "parentSession": parent.id,
                    "parentCallId": context.call_id,
                },
            )
            answer = await _run_child(child, prompt_message, context.cancelled)
        finally:
            await child.aclose()
        meta = {"childSession": child.id}
        failure = answer.failure
        if failure is not None:
            text = f"the sub-agent failed ({failure.code}): {failure.message}"
            return ToolOutput(text, is_error=True, meta=meta)
        if answer.finish_reason != "completed":
            return ToolOutput(
                f"the sub-agent ended {answer.finish_reason}", is_error=True, meta=meta
            )
        return ToolOutput(answer.final_response or "", meta=meta)

    return Tool(name=name, description=description, parameters=_PARAMETERS, handler=delegate)


def delegation_depth(header: SessionHeader) -> int:
    """How many delegations deep a session is (its header's ``delegationDepth``; 0 for
    a top-level session)."""
    depth: object = getattr(header, "delegationDepth", None)  # a harness field, kept as extra
    return depth if type(depth) is int and depth >= 0 else 0


def _build_child(factory: ChildFactory, parent: AgentLoop, depth: int) -> AgentLoop:
    header = SessionHeader.model_validate(
        {
            "id": new_session_id(),
            "createdAt": now_ms(),
            "parentSession": parent.id,
            "origin": "subagent",
            "delegationDepth": depth,
        }
    )
    session = Session.create(header=header)
    child = factory(session)
    if not isinstance(child, AgentLoop) or child.session is not session:
        raise AgentError("a sub-agent factory must return an AgentLoop over the session given")
    if child.config.store is not parent.config.store:
        raise AgentError(
            "a sub-agent must be durable on its parent's store: build the child with "
            "store= the parent's store"
        )
    return child


async def _run_child(child: AgentLoop, prompt: Any, cancelled: asyncio.Event) -> Any:
    """Run ``prompt`` on ``child``; when ``cancelled`` is set first, cancel the child
    with cause ``parent`` and wait for its turn to end."""
    running = asyncio.ensure_future(run(child, prompt, raise_on_error=False))
    watching = asyncio.ensure_future(cancelled.wait())
    try:
        await asyncio.wait({running, watching}, return_when=asyncio.FIRST_COMPLETED)
        if not running.done():
            child.cancel("parent")
        return await running
    finally:
        watching.cancel()


__all__ = [
    "DEFAULT_MAX_DEPTH",
    "ChildFactory",
    "agent_tool",
    "delegation_depth",
]
