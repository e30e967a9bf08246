"""JSON Schema (draft 2020-12) of the dsh_llm wire types, for clients in other languages.

Schemas describe what a reader accepts on the wire (camelCase names). Tag fields
(``type``, ``kind``, ``role``...) are required, as every writer writes them. Other
packages export their own types with :func:`json_schema_of` and the ``dsh schema``
command merges them.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema

from dsh_llm._attachment_ref import AttachmentRef
from dsh_llm._content import ContentBlock
from dsh_llm._failure import LlmFailure
from dsh_llm._messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from dsh_llm._request import GenerateRequest, ToolSchema
from dsh_llm._sources import Source
from dsh_llm._stream import FinishReason, StreamChunk, TokenUsage

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


class _WireSchemaGenerator(GenerateJsonSchema):
    """Pydantic's generator with the wire conventions: tags required, no
    generated per-field titles, and the ``$schema`` dialect stated."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        document = super().generate(schema, mode)
        _require_tags(document)
        return strict_2020_12(document)


def _require_tags(node: object) -> None:
    """Make every constant-valued property (a union tag) required, in place."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            tags = [name for name, spec in properties.items() if "const" in spec]
            for name in tags:
                properties[name].pop("default", None)
            required = node.setdefault("required", [])
            required[:0] = [name for name in tags if name not in required]
        for child in node.values():
            _require_tags(child)
    elif isinstance(node, list):
        for child in node:
            _require_tags(child)


def strict_2020_12(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` as plain draft 2020-12 that strict validators (Ajv ``strict``)
    compile: the ``$schema`` dialect stated and pydantic's OpenAPI ``discriminator``
    annotations removed. A discriminated union's variants carry distinct ``const``
    tags, so its ``oneOf`` accepts exactly the documents it accepted before."""
    return {"$schema": DRAFT_2020_12, **_without_keyword(document, "discriminator")}


_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})
"""Keywords whose value maps names (not keywords) to subschemas."""
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose value is instance data, never a schema."""


def _without_keyword(schema: Any, keyword: str) -> Any:
    """A copy of ``schema`` with ``keyword`` dropped from it and every subschema; a
    property *named* like the keyword, and data such as ``default``, are kept."""
    if isinstance(schema, list):
        return [_without_keyword(child, keyword) for child in schema]
    if not isinstance(schema, dict):
        return schema
    copy: dict[str, Any] = {}
    for name, value in schema.items():
        if name == keyword:
            continue
        if name in _DATA_KEYWORDS:
            copy[name] = value
        elif name in _SCHEMA_MAPS and isinstance(value, dict):
            copy[name] = {key: _without_keyword(sub, keyword) for key, sub in value.items()}
        else:
            copy[name] = _without_keyword(value, keyword)
    return copy


def json_schema_of(type_: Any) -> dict[str, Any]:
    """The draft 2020-12 wire schema of a dsh type (a model class or a union alias)."""
    schema: dict[str, Any] = TypeAdapter(type_).json_schema(
        by_alias=True, schema_generator=_WireSchemaGenerator
    )
    return schema


_WIRE_TYPES: dict[str, Any] = {
    "Message": Message,
    "UserMessage": UserMessage,
    "AssistantMessage": AssistantMessage,
    "ToolResultMessage": ToolResultMessage,
    "SystemMessage": SystemMessage,
    "ContentBlock": ContentBlock,
    "AttachmentRef": AttachmentRef,
    "Source": Source,
    "StreamChunk": StreamChunk,
    "TokenUsage": TokenUsage,
    "FinishReason": FinishReason,
    "LlmFailure": LlmFailure,
    "GenerateRequest": GenerateRequest,
    "ToolSchema": ToolSchema,
}


def wire_schemas() -> dict[str, dict[str, Any]]:
    """``{TypeName: JSON Schema}`` for every public dsh_llm wire type."""
    return {name: json_schema_of(type_) for name, type_ in _WIRE_TYPES.items()}


__all__ = [
    "DRAFT_2020_12",
    "json_schema_of",
    "strict_2020_12",
    "wire_schemas",
]
