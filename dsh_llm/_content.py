"""Content blocks: the parts of a message, discriminated on ``type``."""

from __future__ import annotations

from typing import Annotated, Literal, Self, TypeAlias

from pydantic import Field, TypeAdapter, model_validator

from dsh_llm._attachment_ref import IMAGE_MEDIA_TYPES, AttachmentRef
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
    """An image: a stored ``attachment`` (the harness's form: the bytes live once in the
    session store), or inline base64 ``data`` or a ``url`` with a ``media_type`` —
    exactly one of the three."""

    type: Literal["image"] = "image"
    media_type: str | None = optional(min_length=1)
    """MIME type, e.g. ``image/png``, of ``data`` or ``url`` (an attachment names its own)."""
    data: str | None = optional()
    """Base64-encoded bytes."""
    url: str | None = optional()
    """Where the image can be fetched."""
    attachment: AttachmentRef | None = optional()
    """The stored image: hash, media type, size, width, height and name."""
    width: int | None = optional(ge=1, le=JSON_INT_MAX)
    """Width in pixels of ``data`` or ``url``, when known."""
    height: int | None = optional(ge=1, le=JSON_INT_MAX)
    """Height in pixels of ``data`` or ``url``, when known."""

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        forms = (self.data is not None) + (self.url is not None) + (self.attachment is not None)
        if forms != 1:
            raise ValueError("an image block needs exactly one of 'data', 'url' or 'attachment'")
        ref = self.attachment
        if ref is None:
            if self.media_type is None:
                raise ValueError("an image block with 'data' or 'url' needs 'mediaType'")
            return self
        if self.media_type is not None or self.width is not None or self.height is not None:
            raise ValueError(
                "an image block with an 'attachment' takes its media type and size from it"
            )
        if ref.media_type not in IMAGE_MEDIA_TYPES:
            raise ValueError(
                f"an image attachment must be one of {sorted(IMAGE_MEDIA_TYPES)}, "
                f"not {ref.media_type!r} (use a file block)"
            )
        if ref.width is None or ref.height is None:
            raise ValueError("an image attachment needs its 'width' and 'height'")
        return self


class FileBlock(DshModel):
    """A stored file that is not an image (a PDF, a text file): only its reference is in
    the message; the bytes live once in the session store."""

    type: Literal["file"] = "file"
    attachment: AttachmentRef
    """The stored file: hash, media type, size and name."""

    @model_validator(mode="after")
    def _not_an_image(self) -> Self:
        if self.attachment.media_type in IMAGE_MEDIA_TYPES:
            raise ValueError("an image attachment belongs in an image block")
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
    TextBlock | ReasoningBlock | ImageBlock | FileBlock | ToolCallBlock | ToolResultBlock,
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
    "FileBlock",
    "ImageBlock",
    "ReasoningBlock",
    "TextBlock",
    "ToolCallBlock",
    "ToolResultBlock",
]
