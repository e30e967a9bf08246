"""Server-sent events in the providers' documented shapes, for the scripted server.

``chat_*``: OpenAI chat-completion chunks (tests add DeepSeek's extra fields where
they need them). ``anthropic_event`` and the helpers named after Anthropic's event
types (``message_start``, ``block_start`` for ``content_block_start``, ...): Messages
stream events. ``responses_*``: OpenAI Responses stream events, in the shapes of the
``openai`` package's ``types/responses`` models (``response.output_item.added``, ...)."""

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


def responses_event(kind: str, **fields: Any) -> bytes:
    """One Responses stream event, named in ``event:`` and ``type`` as OpenAI sends it."""
    return sse_frame({"type": kind, "sequence_number": 0, **fields}, event=kind)


def responses_object(status: str, **fields: Any) -> dict[str, Any]:
    """The ``response`` object of ``response.created`` / ``.completed`` / ..."""
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": status,
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **fields,
    }


def responses_usage(
    input_tokens: int,
    output_tokens: int,
    *,
    cached: int = 0,
    written: int = 0,
    reasoning: int = 0,
) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def responses_created() -> bytes:
    return responses_event("response.created", response=responses_object("in_progress"))


def responses_completed(usage: dict[str, Any] | None = None) -> bytes:
    return responses_event(
        "response.completed", response=responses_object("completed", usage=usage)
    )


def responses_item_added(output_index: int, item: dict[str, Any]) -> bytes:
    return responses_event("response.output_item.added", output_index=output_index, item=item)


def responses_item_done(output_index: int, item: dict[str, Any]) -> bytes:
    return responses_event("response.output_item.done", output_index=output_index, item=item)


def responses_message(item_id: str, text: str | None, status: str) -> dict[str, Any]:
    content = [] if text is None else [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": status,
        "content": content,
    }


def responses_text_delta(output_index: int, delta: str, *, item_id: str = "msg_1") -> bytes:
    return responses_event(
        "response.output_text.delta",
        item_id=item_id,
        output_index=output_index,
        content_index=0,
        delta=delta,
        logprobs=[],
    )


def responses_text_reply(text: str, usage: dict[str, Any] | None = None) -> list[bytes]:
    """A whole text response, as the Responses API streams one."""
    return [
        responses_created(),
        responses_item_added(0, responses_message("msg_1", None, "in_progress")),
        responses_text_delta(0, text),
        responses_item_done(0, responses_message("msg_1", text, "completed")),
        responses_completed(usage or responses_usage(5, 2)),
    ]


def responses_call(
    call_id: str, name: str, arguments: str, *, item_id: str = "fc_1", status: str = "completed"
) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def responses_arguments_delta(output_index: int, delta: str, *, item_id: str = "fc_1") -> bytes:
    return responses_event(
        "response.function_call_arguments.delta",
        item_id=item_id,
        output_index=output_index,
        delta=delta,
    )


def responses_reasoning(
    item_id: str, summary: list[str], *, encrypted: str | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": text} for text in summary],
    }
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def responses_summary_delta(
    output_index: int, summary_index: int, delta: str, *, item_id: str = "rs_1"
) -> bytes:
    return responses_event(
        "response.reasoning_summary_text.delta",
        item_id=item_id,
        output_index=output_index,
        summary_index=summary_index,
        delta=delta,
    )
