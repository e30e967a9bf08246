"""What an MCP tool result becomes in dsh: content blocks the model sees, the server's
structured content kept in the result's ``meta``."""

from __future__ import annotations

from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic_core import to_json

from dsh_agent.tools import ToolOutput
from dsh_llm._content import ContentBlock, ImageBlock, TextBlock

STRUCTURED_META_KEY = "mcpStructuredContent"
"""The key under which a result's ``structuredContent`` is logged in ``meta``."""


def tool_output(result: CallToolResult) -> ToolOutput:
    """Text and images map to dsh blocks; any other content (audio, resources) is shown
    to the model as its JSON. A result with only structured content shows that JSON.
    ``isError`` results stay error results, so the model can act on them."""
    blocks: list[ContentBlock] = [_block(item) for item in result.content]
    structured = result.structured_content
    if not blocks and structured is not None:
        blocks.append(TextBlock(text=to_json(structured).decode()))
    if not blocks:
        blocks.append(TextBlock(text="(the tool returned no content)"))
    meta = None if structured is None else {STRUCTURED_META_KEY: structured}
    return ToolOutput(blocks, is_error=bool(result.is_error), meta=meta)


def _block(item: object) -> ContentBlock:
    if isinstance(item, TextContent):
        return TextBlock(text=item.text)
    if isinstance(item, ImageContent):
        return ImageBlock(media_type=item.mime_type, data=item.data)
    dump = getattr(item, "model_dump", None)
    shown = dump(mode="json", by_alias=True, exclude_none=True) if callable(dump) else str(item)
    return TextBlock(text=to_json(shown).decode())


__all__ = [
    "STRUCTURED_META_KEY",
    "tool_output",
]
