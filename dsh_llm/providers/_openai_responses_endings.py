"""How a Responses stream ends, in dsh terms: the usage of a finished response, the
finish of an incomplete one, and the failure of a failed response or an ``error``
event."""

from __future__ import annotations

from typing import Any

from dsh_llm._failure import LlmFailure
from dsh_llm._stream import ErrorFinish, FinishReason, MaxTokensFinish, TokenUsage
from dsh_llm.failure_codes import INVALID_REQUEST, RATE_LIMIT, SERVER, stop_reason_code
from dsh_llm.providers._errors import refined_code
from dsh_llm.providers._streaming import unknown_stop
from dsh_llm.providers._wire_values import (
    optional_count,
    optional_name,
    required_count,
    wire_object,
)

_CODE_BY_ERROR = {
    "server_error": SERVER,
    "rate_limit_exceeded": RATE_LIMIT,
    "invalid_prompt": INVALID_REQUEST,
    "bio_policy": stop_reason_code("content_filter"),
    "misalignment_policy_violation": stop_reason_code("content_filter"),
}
"""Failure codes of the ``code`` of a failed response or an error event; the image
errors (``invalid_image...``, ``image_...``) are bad requests, any other code is the
provider's own trouble (``SERVER``)."""


def incomplete_finish(response: Any) -> FinishReason:
    """The finish of a ``response.incomplete``, by ``incomplete_details.reason``."""
    details = getattr(response, "incomplete_details", None)
    reason = (
        None
        if details is None
        else optional_name(
            getattr(wire_object(details, "response.incomplete_details"), "reason", None),
            "response.incomplete_details.reason",
        )
    )
    if reason == "max_output_tokens":
        return MaxTokensFinish()
    if reason == "content_filter":
        return ErrorFinish(
            failure=LlmFailure(
                message="the provider's content filter stopped the response",
                code=stop_reason_code(reason),
            )
        )
    return unknown_stop(reason)


def response_failure(response: Any) -> LlmFailure:
    """The failure of a ``response.failed``, from the response's ``error``."""
    error = getattr(response, "error", None)
    if error is None:
        return _failure(None, None, "the response failed")
    error = wire_object(error, "response.error")
    return _failure(
        optional_name(getattr(error, "code", None), "response.error.code"),
        optional_name(getattr(error, "message", None), "response.error.message"),
        "the response failed",
    )


def error_event_failure(event: Any) -> LlmFailure:
    """The failure of an ``error`` event."""
    return _failure(
        optional_name(getattr(event, "code", None), "code"),
        optional_name(getattr(event, "message", None), "message"),
        "error event in the stream",
    )


def _failure(code: str | None, message: str | None, what: str) -> LlmFailure:
    kind = _CODE_BY_ERROR.get(code or "")
    if kind is None:
        image = code is not None and code.startswith(("invalid_image", "image_", "empty_image"))
        kind = INVALID_REQUEST if image else SERVER
    words = message or "no message given"
    shown = f"{what}: {words}" + (f" ({code})" if code else "")
    return LlmFailure(message=shown, code=refined_code(kind, f"{code or ''} {words}"))


def usage_from_wire(usage: Any) -> TokenUsage:
    """Disjoint token counts: cache reads (``input_tokens_details.cached_tokens``) and
    cache writes (``cache_write_tokens``) are taken out of ``input_tokens``;
    ``output_tokens_details.reasoning_tokens`` are the reasoning tokens."""
    where = "response.usage"
    details = getattr(usage, "input_tokens_details", None)
    if details is not None:
        details = wire_object(details, f"{where}.input_tokens_details")
    cached = optional_count(
        getattr(details, "cached_tokens", None), f"{where}.input_tokens_details.cached_tokens"
    )
    written = optional_count(
        getattr(details, "cache_write_tokens", None),
        f"{where}.input_tokens_details.cache_write_tokens",
    )
    output_details = getattr(usage, "output_tokens_details", None)
    if output_details is not None:
        output_details = wire_object(output_details, f"{where}.output_tokens_details")
    reasoning = optional_count(
        getattr(output_details, "reasoning_tokens", None),
        f"{where}.output_tokens_details.reasoning_tokens",
    )
    total_input = required_count(getattr(usage, "input_tokens", None), f"{where}.input_tokens")
    return TokenUsage(
        input_tokens=max(total_input - (cached or 0) - (written or 0), 0),
        output_tokens=required_count(
            getattr(usage, "output_tokens", None), f"{where}.output_tokens"
        ),
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=reasoning,
    )


__all__ = [
    "error_event_failure",
    "incomplete_finish",
    "response_failure",
    "usage_from_wire",
]
