"""Tools: what the model may call, and the executor that turns one call into an outcome.

A :class:`Tool` is a name, a description, the JSON Schema of its arguments and an async
handler. :func:`tool` builds one from a typed function, validating the arguments with
Pydantic before the body runs. :func:`execute_tool_call` never raises for a tool
problem: bad arguments, an unknown tool, a failing or cancelled handler all become an
error outcome with a stable code and a text the model can act on, so the turn goes on.
The loop creates the ``ToolResultMessage`` from the outcome when it commits it.
"""

from dsh_agent._tool_context import ToolContext as ToolContext
from dsh_agent._tool_definition import (
    Tool,
    ToolContent,
    ToolDecorator,
    ToolHandler,
    ToolOutput,
    ToolReturn,
    tool,
)
from dsh_agent._tool_execution import ToolCallOutcome, execute_tool_call

__all__ = [
    "Tool",
    "ToolCallOutcome",
    "ToolContent",
    "ToolDecorator",
    "ToolHandler",
    "ToolOutput",
    "ToolReturn",
    "execute_tool_call",
    "tool",
]
