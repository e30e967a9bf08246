"""Which tool calls need a person's approval before they run.

A tool declared ``@tool(requires_approval=True)`` always does; an agent's
:data:`ApprovalPolicy` may ask about other calls too, but never waives a tool's own
requirement. A policy that raises fails closed: the call is asked about.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

from dsh_agent.tools import Tool
from dsh_llm._content import ToolCallBlock
from dsh_llm._failure import describe_exception

ApprovalPolicy: TypeAlias = Callable[[ToolCallBlock], bool | str]
"""Called once per tool call before it runs: ``False`` lets it run, ``True`` asks
for approval, a string asks with that reason (logged in ``approval/asked``)."""


def approval_needed(
    call: ToolCallBlock, tool: Tool | None, policy: ApprovalPolicy | None
) -> tuple[bool, str | None]:
    """Whether ``call`` must be approved first, and the reason to log with the ask."""
    if tool is None:
        return False, None  # an unknown tool fails with TOOL_NOT_FOUND without running
    if policy is not None:
        try:
            verdict = policy(call)
        except Exception as error:
            return True, f"the approval policy failed ({describe_exception(error)})"
        if isinstance(verdict, str):
            return True, verdict or None
        if verdict:
            return True, None
    return tool.requires_approval, None


__all__ = [
    "ApprovalPolicy",
    "approval_needed",
]
