"""``GenerateRequest`` → OpenAI chat-completions request body.

The body is plain JSON built here rather than the SDK's typed parameters, because
OpenAI-compatible servers take fields the SDK does not declare (DeepSeek's
``reasoning_content`` on assistant messages) and because an absent option must be
absent on the wire, not ``null``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from dsh_llm._content import FileBlock, ImageBlock, ReasoningBlock, TextBlock, ToolCallBlock
from dsh_llm._frozen_json import thaw_json
from dsh_llm._messages import AssistantMessage, SystemMessage, ToolResultMessage, UserMessage
from dsh_llm._prompt_cache import CacheRetention, PromptCache
from dsh_llm._request import GenerateRequest
from dsh_llm.providers._attachment_wire import (
    AttachmentBytes,
    data_url,
    file_name,
    text_of,
    unsupported_attachment,
)
from dsh_llm.providers._errors import unsupported_block
from dsh_llm.providers._replay import own_replay_state

API = "OpenAI chat completions"
REPLAY_FORMAT = "openai-chat"
"""The ``format`` tag of this adapter's replay state."""
REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Delta fields that carry reasoning: DeepSeek's, and the name newer servers use."""
MaxTokensField: TypeAlias = Literal["max_tokens", "max_completion_tokens"]
WireMessage: TypeAlias = dict[str, Any]

TEXT_SEPARATOR = "\n\n"
"""Joins the text blocks of one message where the wire takes a single string."""


@dataclass(frozen=True)
class ChatBody:
    """The request body: ``messages`` plus the options that are present."""

    messages: list[WireMessage]
    options: dict[str, Any]


def chat_body(
    request: GenerateRequest,
    *,
    max_tokens_field: MaxTokensField,
    attachments: AttachmentBytes | None = None,
) -> ChatBody:
    """Translate a request; raises :class:`_UnsupportedRequestError` for content the
    protocol cannot carry. ``attachments`` holds the bytes of the request's attachments
    (``read_request_attachments``)."""
    attachments = attachments or {}
    messages: list[WireMessage] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        if isinstance(message, ToolResultMessage):
            messages.append(_tool_message(message))
        elif isinstance(message, AssistantMessage):
            messages.append(_assistant_message(message, request))
        elif isinstance(message, SystemMessage):
            messages.append({"role": "system", "content": _plain_text(message)})
        else:
            messages.append({"role": "user", "content": _user_content(message, attachments)})
    options: dict[str, Any] = {}
    if request.tools:
        options["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": thaw_json(tool.parameters),
                },
            }
            for tool in request.tools
        ]
    if request.max_tokens is not None:
        options[max_tokens_field] = request.max_tokens
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.top_p is not None:
        options["top_p"] = request.top_p
    if request.stop:
        options["stop"] = list(request.stop)
    if request.reasoning_effort is not None:
        options["reasoning_effort"] = request.reasoning_effort
    options.update(_cache_options(request.prompt_cache))
    return ChatBody(messages=messages, options=options)


CACHE_RETENTION: dict[CacheRetention, str] = {"short": "in_memory", "long": "24h"}
"""``prompt_cache_retention`` for each retention. OpenAI caches prompt prefixes on its
own; breakpoints are Anthropic's and are not sent."""


def _cache_options(cache: PromptCache | None) -> dict[str, str]:
    options: dict[str, str] = {}
    if cache is not None and cache.key is not None:
        options["prompt_cache_key"] = cache.key
    if cache is not None and cache.retention is not None:
        options["prompt_cache_retention"] = CACHE_RETENTION[cache.retention]
    return options


def _user_content(message: UserMessage, attachments: AttachmentBytes) -> str | list[dict[str, Any]]:
    """A string when the message is all text (every server takes that); content
    parts only when it holds images or files."""
    if not any(isinstance(block, ImageBlock | FileBlock) for block in message.content):
        return _plain_text(message)
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            url = _image_url(block, attachments)
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif isinstance(block, FileBlock):
            parts.append(_file_part(message.id, block, attachments))
        else:
            raise unsupported_block(API, message.id, block.type, "a user message")
    return parts


def _file_part(message_id: str, block: FileBlock, attachments: AttachmentBytes) -> WireMessage:
    """A PDF as a ``file`` part (the one document type chat completions takes), a
    UTF-8 text file as a text part headed by its name; anything else is refused."""
    ref = block.attachment
    if ref.media_type == "application/pdf":
        return {
            "type": "file",
            "file": {"filename": file_name(ref), "file_data": data_url(ref, attachments)},
        }
    text = text_of(ref, attachments)
    if text is not None:
        return {"type": "text", "text": f"{file_name(ref)}:\n{text}"}
    raise unsupported_attachment(API, message_id, ref, "a user message")


def _plain_text(message: UserMessage | SystemMessage) -> str:
    texts = []
    for block in message.content:
        if not isinstance(block, TextBlock):
            raise unsupported_block(API, message.id, block.type, f"a {message.role} message")
        texts.append(block.text)
    return TEXT_SEPARATOR.join(texts)


def _tool_message(message: ToolResultMessage) -> WireMessage:
    result = message.content[0]
    texts = []
    for block in result.content:
        if not isinstance(block, TextBlock):
            raise unsupported_block(API, message.id, block.type, "a tool result")
        texts.append(block.text)
    return {
        "role": "tool",
        "tool_call_id": result.call_id,
        "content": TEXT_SEPARATOR.join(texts),
    }


def _assistant_message(message: AssistantMessage, request: GenerateRequest) -> WireMessage:
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ReasoningBlock):
            reasoning.append(block.text)
        elif isinstance(block, ToolCallBlock):
            calls.append(
                {
                    "id": block.call_id,
                    "type": "function",
                    "function": {"name": block.name, "arguments": block.arguments},
                }
            )
        else:
            raise unsupported_block(API, message.id, block.type, "an assistant message")
    wire: WireMessage = {"role": "assistant", "content": TEXT_SEPARATOR.join(texts)}
    if calls:
        wire["tool_calls"] = calls
    state = own_replay_state(message, request, REPLAY_FORMAT)
    field = state.get("reasoningField") if state is not None else None
    if field in REASONING_FIELDS and reasoning:
        wire[str(field)] = "".join(reasoning)
    return wire


def _image_url(block: ImageBlock, attachments: AttachmentBytes) -> str:
    if block.attachment is not None:
        return data_url(block.attachment, attachments)
    if block.url is not None:
        return block.url
    return f"data:{block.media_type};base64,{block.data}"


__all__ = [
    "API",
    "CACHE_RETENTION",
    "REASONING_FIELDS",
    "REPLAY_FORMAT",
    "TEXT_SEPARATOR",
    "ChatBody",
    "MaxTokensField",
    "WireMessage",
    "chat_body",
]
