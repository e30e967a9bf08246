"""From a typed function to a tool's arguments: docstring parsing and the schema."""

from dsh_agent._tool_schema.docstrings import ParsedDocstring, parse_docstring
from dsh_agent._tool_schema.signature import ToolSignature, inspect_function

__all__ = ["ParsedDocstring", "ToolSignature", "inspect_function", "parse_docstring"]
