"""MCP tool servers as dsh tools (extra ``dsh-sdk[mcp]``): :class:`McpToolset`.

Built on the official ``mcp`` package; stdio servers are given as
``mcp.StdioServerParameters``, Streamable HTTP servers as their URL.
"""

from __future__ import annotations

try:
    import mcp as _mcp  # noqa: F401
except ImportError as missing:  # pragma: no cover - exercised only without the extra
    raise ImportError("dsh_agent.mcp needs the MCP SDK: pip install 'dsh-sdk[mcp]'") from missing

from mcp import StdioServerParameters

from dsh_agent.errors import McpConnectionLost
from dsh_agent.mcp._connection import McpTarget
from dsh_agent.mcp._results import STRUCTURED_META_KEY
from dsh_agent.mcp._toolset import McpToolset

__all__ = [
    "STRUCTURED_META_KEY",
    "McpConnectionLost",
    "McpTarget",
    "McpToolset",
    "StdioServerParameters",
]
