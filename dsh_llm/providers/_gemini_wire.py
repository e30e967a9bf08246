"""``GenerateRequest`` → Gemini ``generateContent`` contents and config.

Gemini has no system or tool role: the system prompt (and the text of any
``SystemMessage``) goes to ``system_instruction``; tool results are
``function_response`` parts of a user turn, named after the call they answer;
consecutive messages of one role are merged into one turn (the parallel calls of a
turn must be answered in one turn).

Attachments go as inline data (the bytes, which the SDK sends as base64): images in
the formats Gemini reads, PDFs, and UTF-8 text files as ``text/plain`` (the text
type Gemini always takes, whatever the file's own ``text/*`` type). In a tool result
they are the function response's own parts, beside its text output.

The assistant message's replay state (``format: "gemini"``) holds what its content
does not: one thought signature (base64, or ``null``) per content block, in order,
and the ids of the calls the model sent without one (dsh made those up; they are
sent back without an id, as the model wrote them). Replayed to the same provider
and model only; thought parts are sent back only with it. If the signatures do not
line up with the blocks (a rewritten message), no signature and no thought is sent.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from dsh_llm._attachment_ref import AttachmentRef
from dsh_llm._content import (
    ContentBlock,
    FileBlock,
    ImageBlock,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
)
from dsh_llm._frozen_json import thaw_json
from dsh_llm._messages import AssistantMessage, SystemMessage, ToolResultMessage
from dsh_llm._request import GenerateRequest
from dsh_llm.providers._attachment_wire import AttachmentBytes, text_of, unsupported_attachment
from dsh_llm.providers._errors import _UnsupportedRequestError, unsupported_block
from dsh_llm.providers._replay import own_replay_state

API = "the Gemini API"
REPLAY_FORMAT = "gemini"
"""The ``format`` tag of this adapter's replay state."""
THINKING_LEVELS = ("minimal", "low", "medium", "high")
"""The ``reasoning_effort`` values Gemini's ``thinking_level`` takes."""
WirePart: TypeAlias = dict[str, Any]
WireContent: TypeAlias = dict[str, Any]

READABLE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp"})
"""The attachment image formats Gemini reads (it takes no GIF)."""
TEXT_MEDIA_TYPE = "text/plain"


@dataclass(frozen=True)
class GeminiBody:
    """The request: ``contents`` and the ``config`` (``GenerateContentConfig`` fields)."""

    contents: list[WireContent]
    config: dict[str, Any]


def gemini_body(
    request: GenerateRequest,
    *,
    thinking: Mapping[str, Any] | None,
    attachments: AttachmentBytes | None = None,
) -> GeminiBody:
    """Translate a request; raises :class:`_UnsupportedRequestError` for content the
    API cannot carry. ``attachments`` holds the bytes of the request's attachments
    (``read_request_attachments``)."""
    attachments = attachments or {}
    system = [request.system] if request.system else []
    replay = _Replay(request, attachments)
    contents: list[WireContent] = []
    for message in request.messages:
        if isinstance(message, SystemMessage):
            system.append(
                "\n\n".join(_text(message.id, b, "a system message") for b in message.content)
            )
            continue
        if isinstance(message, AssistantMessage):
            role, parts = "model", replay.model_parts(message)
        elif isinstance(message, ToolResultMessage):
            role, parts = "user", [replay.function_response(message)]
        else:
            said = [b for b in message.content if not (isinstance(b, TextBlock) and not b.text)]
            role, parts = "user", [_user_part(message.id, block, attachments) for block in said]
        if not parts:
            continue  # nothing would be said; the API refuses empty turns
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return GeminiBody(contents=contents, config=_config(request, system, thinking))


def _config(
    request: GenerateRequest, system: list[str], thinking: Mapping[str, Any] | None
) -> dict[str, Any]:
    config: dict[str, Any] = {
        # One request per call: the SDK neither runs tools nor follows continuations.
        "automatic_function_calling": {"disable": True},
        "automatic_continuation": False,
    }
    if system:
        config["system_instruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    if request.tools:
        config["tools"] = [
            {
                "function_declarations": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters_json_schema": thaw_json(tool.parameters),
                    }
                    for tool in request.tools
                ]
            }
        ]
    if request.max_tokens is not None:
        config["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.top_p is not None:
        config["top_p"] = request.top_p
    if request.stop:
        config["stop_sequences"] = list(request.stop)
    thinking_config = dict(thinking or {})
    if request.reasoning_effort is not None:
        if request.reasoning_effort not in THINKING_LEVELS:
            raise _UnsupportedRequestError(
                f"reasoning_effort {request.reasoning_effort!r}: {API} takes one of "
                f"{', '.join(THINKING_LEVELS)} as its thinking level"
            )
        thinking_config["thinking_level"] = request.reasoning_effort.upper()
    if thinking_config:
        config["thinking_config"] = thinking_config
    return config


class _Replay:
    """What the request's assistant messages need to go back as the model wrote
    them: their own replay state, the names of their calls, and which calls had no
    id on the wire."""

    def __init__(self, request: GenerateRequest, attachments: AttachmentBytes) -> None:
        self._request = request
        self._attachments = attachments
        self._names: dict[str, str] = {}
        self._unnamed: set[str] = set()
        for message in request.messages:
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, ToolCallBlock):
                        self._names[block.call_id] = block.name
                state = own_replay_state(message, request, REPLAY_FORMAT)
                unnamed = state.get("unnamedCalls") if state is not None else None
                if isinstance(unnamed, Sequence) and not isinstance(unnamed, str):
                    self._unnamed.update(str(call_id) for call_id in unnamed)

    def model_parts(self, message: AssistantMessage) -> list[WirePart]:
        signatures = self._signatures(message)
        parts: list[WirePart] = []
        for position, block in enumerate(message.content):
            signature = signatures[position] if signatures is not None else None
            if isinstance(block, ReasoningBlock):
                if signatures is None:
                    continue  # another model's reasoning, or unsigned: not replayed
                part: WirePart = {"text": block.text, "thought": True}
            elif isinstance(block, TextBlock):
                if not block.text and signature is None:
                    continue
                part = {"text": block.text}
            elif isinstance(block, ToolCallBlock):
                call: dict[str, Any] = {"name": block.name, "args": _arguments(block.arguments)}
                if block.call_id not in self._unnamed:
                    call["id"] = block.call_id
                part = {"function_call": call}
            else:
                raise unsupported_block(API, message.id, block.type, "an assistant message")
            if signature is not None:
                part["thought_signature"] = signature
            parts.append(part)
        return parts

    def function_response(self, message: ToolResultMessage) -> WirePart:
        result = message.content[0]
        name = self._names.get(result.call_id)
        if name is None:
            raise _UnsupportedRequestError(
                f"message {message.id!r}: {API} names each tool result after its call, "
                f"and the call {result.call_id!r} is not in the request"
            )
        texts: list[str] = []
        media: list[WirePart] = []
        for block in result.content:
            ref = _attached(block)
            if ref is None:
                texts.append(_text(message.id, block, "a tool result"))
            else:
                blob = _inline_data(message.id, ref, "a tool result", self._attachments)
                media.append({"inline_data": blob})
        text = "\n\n".join(texts)
        response: WirePart = {
            "name": name,
            "response": {"error": text} if result.is_error else {"output": text},
        }
        if media:
            response["parts"] = media
        if result.call_id not in self._unnamed:
            response["id"] = result.call_id
        return {"function_response": response}

    def _signatures(self, message: AssistantMessage) -> list[bytes | None] | None:
        """The message's thought signatures, one per block, if this adapter may
        replay them and they line up with the blocks; otherwise ``None``."""
        state = own_replay_state(message, self._request, REPLAY_FORMAT)
        entries = state.get("signatures") if state is not None else None
        if not isinstance(entries, Sequence) or isinstance(entries, str):
            return None
        if len(entries) != len(message.content):
            return None
        signatures: list[bytes | None] = []
        for entry in entries:
            if entry is None:
                signatures.append(None)
                continue
            if not isinstance(entry, str):
                return None
            try:
                signatures.append(base64.b64decode(entry, validate=True))
            except (binascii.Error, ValueError):
                return None
        return signatures


def _arguments(arguments: str) -> dict[str, Any]:
    """The call's arguments as a JSON object. Arguments that are not one are sent as
    ``{}``: the tool result already told the model what was wrong with them."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _attached(block: ContentBlock) -> AttachmentRef | None:
    """The attachment a file or image block refers to, if it refers to one."""
    return block.attachment if isinstance(block, FileBlock | ImageBlock) else None


def _inline_data(
    message_id: str, ref: AttachmentRef, where: str, attachments: AttachmentBytes
) -> dict[str, Any]:
    """The attachment as an inline blob; a type Gemini does not read is refused."""
    if ref.media_type in READABLE_IMAGE_TYPES or ref.media_type == "application/pdf":
        return {"mime_type": ref.media_type, "data": attachments[ref.attachment_id]}
    if text_of(ref, attachments) is not None:
        return {"mime_type": TEXT_MEDIA_TYPE, "data": attachments[ref.attachment_id]}
    raise unsupported_attachment(API, message_id, ref, where)


def _user_part(message_id: str, block: ContentBlock, attachments: AttachmentBytes) -> WirePart:
    if isinstance(block, TextBlock):
        return {"text": block.text}
    ref = _attached(block)
    if ref is not None:
        return {"inline_data": _inline_data(message_id, ref, "a user message", attachments)}
    if isinstance(block, ImageBlock):
        if block.url is not None:
            return {"file_data": {"file_uri": block.url, "mime_type": block.media_type}}
        try:
            data = base64.b64decode(block.data or "", validate=True)
        except (binascii.Error, ValueError):
            raise _UnsupportedRequestError(
                f"message {message_id!r}: an image's data is not base64"
            ) from None
        return {"inline_data": {"mime_type": block.media_type, "data": data}}
    raise unsupported_block(API, message_id, block.type, "a user message")


def _text(message_id: str, block: ContentBlock, where: str) -> str:
    if not isinstance(block, TextBlock):
        raise unsupported_block(API, message_id, block.type, where)
    return block.text


__all__ = [
    "API",
    "REPLAY_FORMAT",
    "THINKING_LEVELS",
    "GeminiBody",
    "gemini_body",
]
