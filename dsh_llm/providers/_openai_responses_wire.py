"""``GenerateRequest`` → OpenAI Responses request body.

The system prompt is the ``instructions``; the messages become ``input`` items in
order: user and system messages as role messages, a tool result as a
``function_call_output``, an assistant message as its items in content order —
reasoning items, assistant text, ``function_call``s — so a reasoning item stays in
front of the call it led to. Nothing is stored at the provider (``store: false``):
every request carries the whole conversation, the reasoning included.

Reasoning is replayed from the assistant message's replay state, which holds one
entry per reasoning item of the response: its ``id``, its ``encryptedContent`` when
the provider sent one, and ``blocks``, the kind of each reasoning block of the
message that came from it, in order (``summary``, ``content``, or ``empty`` for the
one empty block of an item that had no text). The text itself is the blocks'. The
item goes back exactly as it came: id, summary parts, reasoning-text parts and
encrypted content. Reasoning from another provider or model, or whose entries do not
line up with the message's reasoning blocks, is not sent: the provider could not
read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeGuard

from dsh_llm._content import (
    ContentBlock,
    FileBlock,
    ImageBlock,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
)
from dsh_llm._frozen_json import thaw_json
from dsh_llm._messages import AssistantMessage, SystemMessage, ToolResultMessage, UserMessage
from dsh_llm._request import GenerateRequest
from dsh_llm.providers._attachment_wire import (
    AttachmentBytes,
    data_url,
    file_name,
    text_of,
    unsupported_attachment,
)
from dsh_llm.providers._errors import _UnsupportedRequestError, unsupported_block
from dsh_llm.providers._openai_wire import CACHE_RETENTION, TEXT_SEPARATOR
from dsh_llm.providers._replay import own_replay_state

API = "the OpenAI Responses API"
REPLAY_FORMAT = "openai-responses"
"""The ``format`` tag of this adapter's replay state."""
ENCRYPTED_REASONING = "reasoning.encrypted_content"
"""The ``include`` value that has reasoning items carry their encrypted content."""
ReasoningPart: TypeAlias = Literal["summary", "content", "empty"]
"""Where a reasoning block's text sits in its reasoning item."""
REASONING_PARTS: tuple[ReasoningPart, ...] = ("summary", "content", "empty")
ReasoningSummary: TypeAlias = Literal["auto", "concise", "detailed"]
WireItem: TypeAlias = dict[str, Any]

_IMAGE_DETAIL = "auto"


@dataclass(frozen=True)
class ResponsesBody:
    """The request body: the ``input`` items plus the options that are present."""

    input: list[WireItem]
    options: dict[str, Any]


def responses_body(
    request: GenerateRequest,
    *,
    encrypted_reasoning: bool,
    reasoning_summary: ReasoningSummary | None,
    attachments: AttachmentBytes | None = None,
) -> ResponsesBody:
    """Translate a request; raises :class:`_UnsupportedRequestError` for what the
    protocol cannot carry. ``attachments`` holds the bytes of the request's
    attachments (``read_request_attachments``)."""
    attachments = attachments or {}
    if request.stop:
        raise _UnsupportedRequestError(
            f"{API} has no stop sequences: the request's stop {list(request.stop)!r} cannot be sent"
        )
    items: list[WireItem] = []
    for message in request.messages:
        if isinstance(message, ToolResultMessage):
            items.append(_tool_output(message, attachments))
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message, request))
        elif isinstance(message, SystemMessage):
            items.append({"role": "system", "content": _plain_text(message)})
        else:
            items.append({"role": "user", "content": _user_content(message, attachments)})
    options: dict[str, Any] = {"store": False}
    if encrypted_reasoning:
        options["include"] = [ENCRYPTED_REASONING]
    if request.system:
        options["instructions"] = request.system
    if request.tools:
        options["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": thaw_json(tool.parameters),
                "strict": False,
            }
            for tool in request.tools
        ]
    if request.max_tokens is not None:
        options["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.top_p is not None:
        options["top_p"] = request.top_p
    reasoning: dict[str, str] = {}
    if request.reasoning_effort is not None:
        reasoning["effort"] = request.reasoning_effort
    if reasoning_summary is not None:
        reasoning["summary"] = reasoning_summary
    if reasoning:
        options["reasoning"] = reasoning
    cache = request.prompt_cache
    if cache is not None and cache.key is not None:
        options["prompt_cache_key"] = cache.key
    if cache is not None and cache.retention is not None:
        options["prompt_cache_retention"] = CACHE_RETENTION[cache.retention]
    return ResponsesBody(input=items, options=options)


def _user_content(message: UserMessage, attachments: AttachmentBytes) -> str | list[WireItem]:
    """A string when the message is all text; input parts when it holds images or
    files."""
    if not any(isinstance(block, ImageBlock | FileBlock) for block in message.content):
        return _plain_text(message)
    return [
        _input_part(message.id, block, "a user message", attachments) for block in message.content
    ]


def _input_part(
    message_id: str, block: ContentBlock, where: str, attachments: AttachmentBytes
) -> WireItem:
    if isinstance(block, TextBlock):
        return {"type": "input_text", "text": block.text}
    if isinstance(block, ImageBlock):
        return {
            "type": "input_image",
            "image_url": _image_url(block, attachments),
            "detail": _IMAGE_DETAIL,
        }
    if isinstance(block, FileBlock):
        return _file_part(message_id, block, where, attachments)
    raise unsupported_block(API, message_id, block.type, where)


def _image_url(block: ImageBlock, attachments: AttachmentBytes) -> str:
    if block.attachment is not None:
        return data_url(block.attachment, attachments)
    return block.url or f"data:{block.media_type};base64,{block.data}"


def _file_part(
    message_id: str, block: FileBlock, where: str, attachments: AttachmentBytes
) -> WireItem:
    """A PDF as an ``input_file`` (named, its bytes as a data URL), a UTF-8 text file
    as input text headed by its name, as for chat completions; anything else is
    refused."""
    ref = block.attachment
    if ref.media_type == "application/pdf":
        return {
            "type": "input_file",
            "filename": file_name(ref),
            "file_data": data_url(ref, attachments),
        }
    text = text_of(ref, attachments)
    if text is not None:
        return {"type": "input_text", "text": f"{file_name(ref)}:\n{text}"}
    raise unsupported_attachment(API, message_id, ref, where)


def _plain_text(message: UserMessage | SystemMessage) -> str:
    texts = []
    for block in message.content:
        if not isinstance(block, TextBlock):
            raise unsupported_block(API, message.id, block.type, f"a {message.role} message")
        texts.append(block.text)
    return TEXT_SEPARATOR.join(texts)


def _tool_output(message: ToolResultMessage, attachments: AttachmentBytes) -> WireItem:
    """A ``function_call_output``: a string when the result is all text, input
    parts when it holds images or files."""
    result = message.content[0]
    output: str | list[WireItem]
    if all(isinstance(block, TextBlock) for block in result.content):
        output = TEXT_SEPARATOR.join(
            block.text for block in result.content if isinstance(block, TextBlock)
        )
    else:
        output = [
            _input_part(message.id, block, "a tool result", attachments) for block in result.content
        ]
    return {"type": "function_call_output", "call_id": result.call_id, "output": output}


def _assistant_items(message: AssistantMessage, request: GenerateRequest) -> list[WireItem]:
    reasoning_items = _reasoning_items(message, request)
    items: list[WireItem] = []
    reasoning_seen = 0
    for block in message.content:
        if isinstance(block, ReasoningBlock):
            item = reasoning_items.get(reasoning_seen)
            reasoning_seen += 1
            if item is not None:
                items.append(item)  # at the item's first block
        elif isinstance(block, TextBlock):
            if block.text:
                items.append({"role": "assistant", "content": block.text})
        elif isinstance(block, ToolCallBlock):
            items.append(
                {
                    "type": "function_call",
                    "call_id": block.call_id,
                    "name": block.name,
                    "arguments": block.arguments,
                }
            )
        else:
            raise unsupported_block(API, message.id, block.type, "an assistant message")
    return items


def _reasoning_items(message: AssistantMessage, request: GenerateRequest) -> dict[int, WireItem]:
    """The reasoning items to replay, by the position (among the message's reasoning
    blocks) of each item's first block; none when the message's replay state is not
    this adapter's for this model, or its entries do not own exactly the message's
    reasoning blocks."""
    state = own_replay_state(message, request, REPLAY_FORMAT)
    entries = state.get("reasoning") if state is not None else None
    if not _is_list(entries) or not all(_is_reasoning_entry(entry) for entry in entries):
        return {}
    blocks = [block for block in message.content if isinstance(block, ReasoningBlock)]
    if sum(len(entry["blocks"]) for entry in entries) != len(blocks):
        return {}
    items: dict[int, WireItem] = {}
    position = 0
    for entry in entries:
        owned = len(entry["blocks"])
        items[position] = _reasoning_item(entry, blocks[position : position + owned])
        position += owned
    return items


def _is_list(value: object) -> TypeGuard[Sequence[Any]]:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _is_reasoning_entry(entry: object) -> bool:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
        return False
    encrypted = entry.get("encryptedContent")
    blocks = entry.get("blocks")
    return (
        (encrypted is None or isinstance(encrypted, str))
        and _is_list(blocks)
        and len(blocks) > 0
        and all(kind in REASONING_PARTS for kind in blocks)
    )


def _reasoning_item(entry: Mapping[str, Any], blocks: list[ReasoningBlock]) -> WireItem:
    """The reasoning item as the provider sent it: its id, its summary and
    reasoning-text parts (the blocks' text, by kind) and its encrypted content."""
    parts = list(zip(entry["blocks"], blocks, strict=True))
    item: WireItem = {
        "type": "reasoning",
        "id": entry["id"],
        "summary": [
            {"type": "summary_text", "text": block.text}
            for kind, block in parts
            if kind == "summary"
        ],
    }
    content = [
        {"type": "reasoning_text", "text": block.text} for kind, block in parts if kind == "content"
    ]
    if content:
        item["content"] = content
    if entry.get("encryptedContent") is not None:
        item["encrypted_content"] = entry["encryptedContent"]
    return item


__all__ = [
    "API",
    "ENCRYPTED_REASONING",
    "REASONING_PARTS",
    "REPLAY_FORMAT",
    "ReasoningPart",
    "ReasoningSummary",
    "ResponsesBody",
    "WireItem",
    "responses_body",
]
