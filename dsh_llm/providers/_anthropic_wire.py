"""``GenerateRequest`` → Anthropic Messages request body.

The Messages API has no system or tool role: the system prompt (and the text of any
``SystemMessage``) goes to ``system``, tool results travel as ``tool_result`` blocks
of a user turn, and consecutive messages of one role are merged into one turn.

Thinking is replayed from the assistant message's replay state, which holds one
entry per reasoning block of its content, in order: ``{"type": "thinking",
"signature"}`` (the thinking text is the block's text, exactly as streamed) or
``{"type": "redacted_thinking", "data"}`` (the block's text is empty). Reasoning from
another provider or model, or without matching entries, is not sent: unsigned
thinking would be refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from dsh_llm._content import (
    ContentBlock,
    FileBlock,
    ImageBlock,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from dsh_llm._frozen_json import thaw_json
from dsh_llm._messages import AssistantMessage, Message, SystemMessage, ToolResultMessage
from dsh_llm._request import GenerateRequest
from dsh_llm.providers._anthropic_cache import mark_cache_breakpoints
from dsh_llm.providers._attachment_wire import (
    AttachmentBytes,
    base64_of,
    file_name,
    text_of,
    unsupported_attachment,
)
from dsh_llm.providers._errors import unsupported_block
from dsh_llm.providers._replay import own_replay_state

API = "the Anthropic Messages API"
REPLAY_FORMAT = "anthropic-messages"
"""The ``format`` tag of this adapter's replay state."""
WireBlock: TypeAlias = dict[str, Any]
WireMessage: TypeAlias = dict[str, Any]


@dataclass(frozen=True)
class MessagesBody:
    """The request body: ``messages``, ``max_tokens`` and the options that are present."""

    messages: list[WireMessage]
    max_tokens: int
    options: dict[str, Any]


def messages_body(
    request: GenerateRequest,
    *,
    default_max_tokens: int,
    thinking: Mapping[str, Any] | None,
    attachments: AttachmentBytes | None = None,
) -> MessagesBody:
    """Translate a request; raises :class:`_UnsupportedRequestError` for content the
    protocol cannot carry. ``attachments`` holds the bytes of the request's attachments
    (``read_request_attachments``)."""
    attachments = attachments or {}
    system = [request.system] if request.system else []
    turns: list[WireMessage] = []
    for message in request.messages:
        if isinstance(message, SystemMessage):
            system.append("\n\n".join(_text_blocks(message)))
            continue
        role = "assistant" if isinstance(message, AssistantMessage) else "user"
        blocks = _wire_blocks(message, request, attachments)
        if not blocks:
            continue  # the API refuses empty turns; nothing would be said anyway
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    options: dict[str, Any] = {}
    if system:
        options["system"] = "\n\n".join(system)
    if request.tools:
        options["tools"] = [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": thaw_json(tool.parameters),
            }
            for tool in request.tools
        ]
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.top_p is not None:
        options["top_p"] = request.top_p
    if request.stop:
        options["stop_sequences"] = list(request.stop)
    if thinking is not None:
        options["thinking"] = dict(thinking)
    if request.reasoning_effort is not None:
        options["output_config"] = {"effort": request.reasoning_effort}
    mark_cache_breakpoints(request.prompt_cache, options, turns)
    max_tokens = request.max_tokens if request.max_tokens is not None else default_max_tokens
    return MessagesBody(messages=turns, max_tokens=max_tokens, options=options)


def _wire_blocks(
    message: Message, request: GenerateRequest, attachments: AttachmentBytes
) -> list[WireBlock]:
    if isinstance(message, AssistantMessage):
        return _assistant_blocks(message, request)
    if isinstance(message, ToolResultMessage):
        return [_tool_result(message.id, message.content[0], attachments)]
    return [
        _user_block(message.id, block, attachments) for block in message.content if _is_said(block)
    ]


def _assistant_blocks(message: AssistantMessage, request: GenerateRequest) -> list[WireBlock]:
    thinking = _thinking_entries(message, request)
    blocks: list[WireBlock] = []
    for block in message.content:
        if isinstance(block, ReasoningBlock):
            if thinking:
                blocks.append(_thinking_block(block, thinking.pop(0)))
        elif isinstance(block, ToolCallBlock):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.call_id,
                    "name": block.name,
                    "input": _arguments_object(block.arguments),
                }
            )
        elif isinstance(block, TextBlock):
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        else:
            raise unsupported_block(API, message.id, block.type, "an assistant message")
    return blocks


def _thinking_entries(
    message: AssistantMessage, request: GenerateRequest
) -> list[Mapping[str, Any]] | None:
    """This adapter's thinking entries for the message, if they line up one to one
    with its reasoning blocks; otherwise ``None`` (the reasoning is not replayed)."""
    state = own_replay_state(message, request, REPLAY_FORMAT)
    entries = state.get("thinking") if state is not None else None
    if not isinstance(entries, Sequence) or isinstance(entries, str):
        return None
    reasoning_count = sum(isinstance(block, ReasoningBlock) for block in message.content)
    if len(entries) != reasoning_count or not all(_is_thinking_entry(e) for e in entries):
        return None
    return list(entries)


def _is_thinking_entry(entry: object) -> bool:
    if not isinstance(entry, Mapping):
        return False
    if entry.get("type") == "thinking":
        return isinstance(entry.get("signature"), str)
    return entry.get("type") == "redacted_thinking" and isinstance(entry.get("data"), str)


def _thinking_block(block: ReasoningBlock, entry: Mapping[str, Any]) -> WireBlock:
    if entry["type"] == "redacted_thinking":
        return {"type": "redacted_thinking", "data": entry["data"]}
    return {"type": "thinking", "thinking": block.text, "signature": entry["signature"]}


def _arguments_object(arguments: str) -> Any:
    """The tool input as a JSON object. Arguments that are not one (a model can
    produce broken JSON, or JSON nested past the parser's limit) are sent as ``{}``:
    the tool result already told the model what was wrong with them."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _tool_result(
    message_id: str, result: ToolResultBlock, attachments: AttachmentBytes
) -> WireBlock:
    wire: WireBlock = {
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "is_error": result.is_error,
    }
    content = [
        _user_block(message_id, block, attachments) for block in result.content if _is_said(block)
    ]
    if content:
        wire["content"] = content
    return wire


def _user_block(message_id: str, block: ContentBlock, attachments: AttachmentBytes) -> WireBlock:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, FileBlock):
        return _document(message_id, block, attachments)
    if isinstance(block, ImageBlock):
        ref = block.attachment
        if ref is not None:
            source = {"type": "base64", "media_type": ref.media_type}
            return {"type": "image", "source": {**source, "data": base64_of(ref, attachments)}}
        if block.url is not None:
            return {"type": "image", "source": {"type": "url", "url": block.url}}
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": block.media_type, "data": block.data},
        }
    raise unsupported_block(API, message_id, block.type, "a user message or tool result")


def _document(message_id: str, block: FileBlock, attachments: AttachmentBytes) -> WireBlock:
    """A PDF as a base64 document, a UTF-8 text file as a text document, both titled
    with the file's name; anything else is refused."""
    ref = block.attachment
    source: WireBlock
    if ref.media_type == "application/pdf":
        source = {"type": "base64", "media_type": ref.media_type}
        source["data"] = base64_of(ref, attachments)
    else:
        text = text_of(ref, attachments)
        if text is None:
            raise unsupported_attachment(API, message_id, ref, "a user message or tool result")
        source = {"type": "text", "media_type": "text/plain", "data": text}
    return {"type": "document", "source": source, "title": file_name(ref)}


def _is_said(block: ContentBlock) -> bool:
    """Empty text blocks are refused by the API and say nothing; they are left out."""
    return not (isinstance(block, TextBlock) and not block.text)


def _text_blocks(message: SystemMessage) -> list[str]:
    texts = []
    for block in message.content:
        if not isinstance(block, TextBlock):
            raise unsupported_block(API, message.id, block.type, "a system message")
        texts.append(block.text)
    return texts


__all__ = [
    "API",
    "REPLAY_FORMAT",
    "MessagesBody",
    "WireBlock",
    "WireMessage",
    "messages_body",
]
