"""Gemini's error responses as :class:`~dsh_llm._stream.LlmFailure` values.

``google-genai`` raises one ``APIError`` both for an HTTP error status and for an
error chunk inside a 200 stream, carrying Google's error body
(``{"error": {"code", "message", "status", "details"}}``) rather than the fields the
shared classifier reads. Its HTTP errors get the same codes as the other adapters'
(by status and wording); the delay comes from ``retry-after`` or, as Google sends
it, from the body's ``RetryInfo.retryDelay`` (``"37s"``). Transport errors are
``httpx``'s own, which the SDK lets through: the shared classifier reads those.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import httpx
from google.genai import errors as genai_errors

from dsh_llm._failure import LlmFailure, describe_exception
from dsh_llm._json_limits import JSON_INT_MAX
from dsh_llm._storable_text import storable_text
from dsh_llm.errors import LlmError
from dsh_llm.failure_codes import SERVER
from dsh_llm.providers._errors import SdkErrors, code_for_status, retry_after_ms

GEMINI_ERRORS = SdkErrors(
    status=genai_errors.APIError,
    timeout=httpx.TimeoutException,
    connection=httpx.TransportError,
    api=genai_errors.APIError,
)
"""The classes the shared classifier sorts. The adapter's stream turns every
``APIError`` into :class:`_GeminiApiError` first (:func:`gemini_failure`), so the
classifier takes its failure as it is."""

_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)s$")


class _GeminiApiError(LlmError):
    """An ``APIError`` of the SDK, classified."""


def classified(error: genai_errors.APIError) -> _GeminiApiError:
    failure = gemini_failure(error)
    return _GeminiApiError(failure.message, failure=failure)


def gemini_failure(error: genai_errors.APIError) -> LlmFailure:
    """The failure for an HTTP error status, or for an error chunk in the stream
    (then there is no status: the body's code picks the failure code alone)."""
    body = _error_object(error.details)
    message = _message(body) or describe_exception(error, with_type=False)
    words = [body.get(key) for key in ("status", "code", "type")]
    wording = " ".join([*(word for word in words if isinstance(word, str)), message])
    response = error.response
    # httpx's ``status_code``, or aiohttp's ``status`` for a client of the caller's own;
    # the SDK's own response object of a 200 stream says 200.
    status = getattr(response, "status_code", None) or getattr(response, "status", None)
    if isinstance(status, int) and status >= 400:
        headers: Mapping[str, str] = getattr(response, "headers", None) or {}
        return LlmFailure(
            message=f"HTTP {status}: {message}",
            code=code_for_status(status, wording),
            status=status,
            provider_retry_after_ms=retry_after_ms(headers) or _retry_delay_ms(body),
        )
    code = error.code if isinstance(error.code, int) and error.code >= 400 else None
    return LlmFailure(
        message=f"error event in the stream: {message}",
        code=SERVER if code is None else code_for_status(code, wording),
        provider_retry_after_ms=_retry_delay_ms(body),
    )


def _error_object(details: object) -> Mapping[str, object]:
    if not isinstance(details, Mapping):
        return {}
    inner = details.get("error")
    return inner if isinstance(inner, Mapping) else details


def _message(body: Mapping[str, object]) -> str | None:
    message = body.get("message")
    return storable_text(message) if isinstance(message, str) and message else None


def _retry_delay_ms(body: Mapping[str, object]) -> int | None:
    """``RetryInfo.retryDelay`` of Google's error details, in milliseconds."""
    details = body.get("details")
    if not isinstance(details, list):
        return None
    for detail in details:
        if not isinstance(detail, Mapping) or detail.get("@type") != _RETRY_INFO:
            continue
        delay = detail.get("retryDelay")
        match = _DURATION.match(delay) if isinstance(delay, str) else None
        if match is not None:
            delay_ms = float(match.group(1)) * 1000.0
            if math.isfinite(delay_ms) and delay_ms > 0:
                return min(math.ceil(delay_ms), JSON_INT_MAX)
    return None


__all__ = ["GEMINI_ERRORS", "classified", "gemini_failure"]
