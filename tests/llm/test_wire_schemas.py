"""The exported JSON Schemas accept every real dump and reject malformed documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from dsh_cli import main
from dsh_llm import (
    AbortedFinish,
    BlockEndChunk,
    BlockStartChunk,
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    LlmFailure,
    MaxTokensFinish,
    Message,
    ReasoningDeltaChunk,
    StopFinish,
    StreamChunk,
    TextBlock,
    TextDeltaChunk,
    TokenUsage,
    ToolCallDeltaChunk,
    ToolCallsFinish,
    ToolSchema,
    UsageChunk,
    create_assistant_message,
    create_system_message,
    create_tool_result_message,
    create_user_message,
    freeze_message,
)
from dsh_llm._schema import DRAFT_2020_12, strict_2020_12, wire_schemas

SCHEMAS = wire_schemas()


def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(SCHEMAS[name])


def _messages() -> dict[str, Message]:
    return {
        "user": create_user_message(content="hi", source={"kind": "user", "rpcId": 1}),
        "plugin": create_user_message(
            content=[{"type": "image", "mediaType": "image/png", "data": "AAAA", "width": 2}],
            source={
                "kind": "plugin",
                "plugin": "notes",
                "form": {"kind": "notice", "summary": "s"},
                "extra": [1],
            },
        ),
        "unknown-source": freeze_message(
            {"id": "u1", "role": "user", "content": [], "source": {"kind": "cron", "at": 5}}
        ),
        "assistant": create_assistant_message(
            content=[
                {"type": "reasoning", "text": "r"},
                {"type": "text", "text": "t"},
                {"type": "tool-call", "id": "c1", "name": "f", "arguments": "{}"},
            ],
            source={"provider": "p", "model": "m", "replayState": {"x": [1, None]}},
        ),
        "tool-result": create_tool_result_message(call_id="c1", content="ok", is_error=True),
        "system": create_system_message(content="be brief"),
    }


_FAILURE = LlmFailure(message="boom", code="SERVER", status=500, request_id="r1")
_CHUNKS: dict[str, StreamChunk] = {
    "block-start": BlockStartChunk(index=0, block_type="text"),
    "text-delta": TextDeltaChunk(index=0, text="he"),
    "reasoning-delta": ReasoningDeltaChunk(index=1, text="hm"),
    "tool-call-delta": ToolCallDeltaChunk(index=2, call_id="c1", name="f", arguments_delta="{"),
    "block-end": BlockEndChunk(index=0, block=TextBlock(text="hello")),
    "usage": UsageChunk(usage=TokenUsage(input_tokens=3, output_tokens=4, cache_read_tokens=1)),
    "finish-stop": FinishChunk(reason=StopFinish(), replay_state={"k": "v"}),
    "finish-tool-calls": FinishChunk(reason=ToolCallsFinish()),
    "finish-max-tokens": FinishChunk(reason=MaxTokensFinish()),
    "finish-aborted": FinishChunk(reason=AbortedFinish(failure=_FAILURE)),
    "finish-error": FinishChunk(reason=ErrorFinish(failure=_FAILURE)),
}


def test_every_schema_is_a_valid_draft_2020_12_schema() -> None:
    for name, schema in SCHEMAS.items():
        assert schema["$schema"] == DRAFT_2020_12, name
        Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize(("kind", "message"), _messages().items())
def test_message_schemas_accept_every_message_kind(kind: str, message: Message) -> None:
    wire = message.model_dump(mode="json")

    _validator("Message").validate(wire)
    _validator(type(message).__name__).validate(wire)
    for block in wire["content"]:
        _validator("ContentBlock").validate(block)
    _validator("Source").validate(wire["source"])


@pytest.mark.parametrize(("kind", "chunk"), _CHUNKS.items())
def test_stream_chunk_schema_accepts_every_chunk_kind(kind: str, chunk: StreamChunk) -> None:
    _validator("StreamChunk").validate(chunk.model_dump(mode="json"))


def test_request_and_its_parts_validate() -> None:
    request = GenerateRequest(
        provider="p",
        model="m",
        messages=tuple(_messages().values()),
        system="sys",
        tools=(ToolSchema(name="f", parameters={"type": "object"}),),
        max_tokens=10,
        temperature=0.5,
        stop=("END",),
    )

    _validator("GenerateRequest").validate(request.model_dump(mode="json"))
    _validator("ToolSchema").validate(request.tools[0].model_dump(mode="json"))  # type: ignore[index]
    _validator("TokenUsage").validate(TokenUsage(input_tokens=1, output_tokens=2).model_dump())
    _validator("LlmFailure").validate(_FAILURE.model_dump(mode="json"))
    _validator("FinishReason").validate(ErrorFinish(failure=_FAILURE).model_dump(mode="json"))


def _without(document: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in document.items() if name != key}


@pytest.mark.parametrize("field", ["id", "role", "content", "source"])
def test_message_schema_rejects_a_missing_field(field: str) -> None:
    wire = _messages()["user"].model_dump(mode="json")

    assert not _validator("Message").is_valid(_without(wire, field))


def test_message_schema_rejects_a_wrong_role_or_block_type() -> None:
    wire = _messages()["assistant"].model_dump(mode="json")
    validator = _validator("Message")

    assert not validator.is_valid({**wire, "role": "robot"})
    assert not validator.is_valid({**wire, "content": [{"type": "widget", "text": "x"}]})
    assert not validator.is_valid({**wire, "source": {"kind": "user"}})


def test_block_and_chunk_schemas_require_their_tag() -> None:
    block = TextBlock(text="x").model_dump()
    chunk = _CHUNKS["text-delta"].model_dump()

    assert not _validator("ContentBlock").is_valid(_without(block, "type"))
    assert not _validator("StreamChunk").is_valid(_without(chunk, "type"))
    assert not _validator("StreamChunk").is_valid({**chunk, "type": "text-deltas"})
    assert not _validator("StreamChunk").is_valid(_without(chunk, "index"))


def test_tool_result_schema_rejects_a_plain_user_source() -> None:
    wire = _messages()["tool-result"].model_dump(mode="json")

    assert not _validator("ToolResultMessage").is_valid({**wire, "source": {"kind": "user"}})


def test_schema_command_writes_one_file_per_type(tmp_path: Path) -> None:
    out = tmp_path / "schemas"

    assert main(["schema", "--out", str(out)]) == 0

    written = {path.stem: json.loads(path.read_text()) for path in out.glob("*.json")}
    assert set(SCHEMAS) | {"SessionHeader", "SessionEvent"} <= set(written)
    assert written["Message"] == SCHEMAS["Message"]


def test_strict_export_drops_only_the_discriminator_keyword() -> None:
    document = {
        "properties": {"discriminator": {"type": "string", "default": {"discriminator": 1}}},
        "oneOf": [{"discriminator": {"propertyName": "kind"}, "type": "object"}],
    }

    assert strict_2020_12(document) == {
        "$schema": DRAFT_2020_12,
        "properties": {"discriminator": {"type": "string", "default": {"discriminator": 1}}},
        "oneOf": [{"type": "object"}],
    }
