"""Content blocks: the parts of a message, discriminated on ``type``."""

from __future__ import annotations

from typing import Annotated, Literal, Self, TypeAlias

from pydantic import Field, TypeAdapter, model_validator

from dsh_llm._ids import CallIdField
from dsh_llm._json_limits import JSON_INT_MAX, MAX_JSON_DEPTH
from dsh_llm._model import DshModel, SerializedByMemberType, optional


class TextBlock(DshModel):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str
    """The text itself."""


class ReasoningBlock(DshModel):
    """Model reasoning ("thinking") shown as text."""

    type: Literal["reasoning"] = "reasoning"
    text: str
    """The reasoning text as the model produced it."""


class ImageBlock(DshModel):
    """An image, carried inline (base64 ``data``) or by ``url`` — exactly one of them."""

    type: Literal["image"] = "image"
    media_type: str = Field(min_length=1)
    """MIME type, e.g. ``image/png``."""
    data: str | None = optional()
    """Base64-encoded bytes."""
    url: str | None = optional()
    """Where the image can be fetched."""
    width: int | None = optional(ge=1, le=JSON_INT_MAX)
    """Width in pixels, when known."""
    height: int | None = optional(ge=1, le=JSON_INT_MAX)
    """Height in pixels, when known."""

    @model_validator(mode="after")
    def _data_or_url(self) -> Self:
        if (self.data is None) == (self.url is None):
            raise ValueError("an image block needs exactly one of 'data' or 'url'")
        return self


class ToolCallBlock(DshModel):
    """A tool call requested by the model."""

    type: Literal["tool-call"] = "tool-call"
    call_id: CallIdField = Field(alias="id")
    """The provider-issued call id that the result must name (``id`` on the wire)."""
    name: str
    """The tool's name as the model wrote it."""
    arguments: str
    """The raw JSON text of the arguments, exactly as the model produced it."""


class ToolResultBlock(DshModel):
    """The outcome of one tool call."""

    type: Literal["tool-result"] = "tool-result"
    call_id: CallIdField = Field(alias="toolCallId")
    """The id of the call this answers (``toolCallId`` on the wire)."""
    content: tuple[ContentBlock, ...]
    """What the tool returned."""
    is_error: bool = False
    """True when the call failed; always written on the wire."""

    @model_validator(mode="after")
    def _nesting_fits(self) -> Self:
        # A message's content, as JSON, holds at most MAX_JSON_DEPTH levels: each
        # tool-result level adds two (its object and its content array), plus the
        # innermost block and the message's own content array.
        if 2 * _tool_result_levels(self) + 2 > MAX_JSON_DEPTH:
            raise ValueError(
                f"tool-result blocks nest deeper than MAX_JSON_DEPTH={MAX_JSON_DEPTH} "
                "levels of JSON"
            )
        return self


def _tool_result_levels(block: ToolResultBlock) -> int:
    """How many tool-result blocks nest here, this one included."""
    inner = [_tool_result_levels(item) for item in block.content if type(item) is ToolResultBlock]
    return 1 + max(inner, default=0)


ContentBlock: TypeAlias = Annotated[
    TextBlock | ReasoningBlock | ImageBlock | ToolCallBlock | ToolResultBlock,
    Field(discriminator="type"),
    SerializedByMemberType,
]
"""Any content block, discriminated on ``type``."""

ToolResultBlock.model_rebuild()

ContentBlockAdapter: TypeAdapter[ContentBlock] = TypeAdapter(ContentBlock)
"""Validates and dumps a single content block of any type."""

__all__ = [
    "ContentBlock",
    "ContentBlockAdapter",
    "ImageBlock",
    "ReasoningBlock",
    "TextBlock",
    "ToolCallBlock",
    "ToolResultBlock",
]
