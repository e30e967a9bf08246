"""Server-sent events in the providers' documented shapes, for the scripted server.

``chat_*``: OpenAI chat-completion chunks (tests add DeepSeek's extra fields where
they need them). ``anthropic_event`` and the helpers named after Anthropic's event
types (``message_start``, ``block_start`` for ``content_block_start``, ...): Messages
stream events."""

from __future__ import annotations

from typing import Any

from providers.http_stub import sse_frame

CHAT_DONE = sse_frame("[DONE]")


def chat_chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
) -> bytes:
    """One ``chat.completion.chunk`` event; a usage-only chunk has no choices."""
    choices = (
        []
        if delta is None and finish_reason is None
        else [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}]
    )
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "served-model",
        "choices": choices,
    }
    if usage is not None:
        body["usage"] = usage
    return sse_frame(body)


def chat_usage(prompt: int, completion: int, **extra: Any) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        **extra,
    }


def anthropic_event(kind: str, **fields: Any) -> bytes:
    return sse_frame({"type": kind, **fields}, event=kind)


def message_start(**usage: int) -> bytes:
    counts = {"input_tokens": 10, "output_tokens": 1, **usage}
    return anthropic_event(
        "message_start",
        message={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": counts,
        },
    )


def block_start(index: int, block: dict[str, Any]) -> bytes:
    return anthropic_event("content_block_start", index=index, content_block=block)


def block_delta(index: int, delta: dict[str, Any]) -> bytes:
    return anthropic_event("content_block_delta", index=index, delta=delta)


def block_stop(index: int) -> bytes:
    return anthropic_event("content_block_stop", index=index)


def message_end(stop_reason: str, output_tokens: int = 5) -> list[bytes]:
    return [
        anthropic_event(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        anthropic_event("message_stop"),
    ]


def text_reply(text: str, stop_reason: str = "end_turn") -> list[bytes]:
    return [
        message_start(),
        block_start(0, {"type": "text", "text": ""}),
        block_delta(0, {"type": "text_delta", "text": text}),
        block_stop(0),
        *message_end(stop_reason),
    ]
