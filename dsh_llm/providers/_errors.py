"""Provider and transport failures as :class:`~dsh_llm._stream.LlmFailure` values.

Both official SDKs raise the same kinds of errors (an HTTP status error carrying the
response, a connection error, a timeout, a generic API error for an error payload
inside a stream); :class:`SdkErrors` names one SDK's classes so a single classifier
serves both adapters; connection errors and timeouts go on to
:mod:`dsh_llm.providers._transport_failures`, which names the endpoint and the cause.
The classifier never raises: every exception becomes a failure, and every text it
takes from the wire or from a foreign exception is made storable (and formatted
safely) first.

The exception classes here (and the two timeout errors in ``_transport_failures``) are
private: an adapter raises them inside its own stream and turns each into a
``finish {error}`` chunk before it leaves the adapter, so no caller ever sees one (the
failure they carry is what reaches the caller).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import NamedTuple

from dsh_llm._failure import LlmFailure, describe_exception
from dsh_llm._json_limits import JSON_INT_MAX
from dsh_llm._storable_text import storable_text
from dsh_llm.errors import LlmError
from dsh_llm.failure_codes import (
    AUTH,
    CONTEXT_WINDOW_EXCEEDED,
    INVALID_REQUEST,
    MALFORMED_RESPONSE,
    QUOTA,
    RATE_LIMIT,
    SERVER,
    TIMEOUT,
    UNKNOWN,
    http_status_code,
)
from dsh_llm.providers._transport_failures import Endpoint, transport_failure

logger = logging.getLogger("dsh_llm.providers")

# Error ``type`` strings in provider error bodies (Anthropic's vocabulary; OpenAI-style
# servers mostly rely on the HTTP status instead).
_CODE_BY_ERROR_TYPE = {
    "authentication_error": AUTH,
    "permission_error": AUTH,
    "invalid_request_error": INVALID_REQUEST,
    "not_found_error": INVALID_REQUEST,
    "request_too_large": INVALID_REQUEST,
    "rate_limit_error": RATE_LIMIT,
    "overloaded_error": SERVER,
    "api_error": SERVER,
    "timeout_error": TIMEOUT,
}

# Provider wording for an exhausted quota and for an overflowing context window, as the
# harness recognizes it (llm/llm error.ts ``isQuotaExceededError`` and
# ``isContextWindowExceededError``).
_QUOTA_WORDING = re.compile(
    r"\binsufficient[\s_-]+(?:quota|balance|credits?)\b"
    r"|\b(?:quota|usage[\s_-]+limit)[\s_-]+(?:exceeded|exhausted|reached)\b"
    r"|\bexceed(?:ed|s)?[\s_-]+(?:(?:your|the)[\s_-]+)?(?:current[\s_-]+)?quota\b"
    r"|\b(?:balance|credits?)[\s_-]+(?:exhausted|depleted)\b"
    r"|\bout[\s_-]+of[\s_-]+(?:credits?|budget)\b",
    re.IGNORECASE,
)
_CONTEXT_WORDING = re.compile(
    r"(?:^|[^a-z0-9])context[\s_-](?:length|window)[\s_-]"
    r"(?:exceed(?:ed|s)?|overflow(?:ed)?|limit[\s_-]exceeded)(?:$|[^a-z0-9])"
    r"|\b(?:maximum|max)(?:\s+(?:allowed|supported))?\s+context\s+(?:length|window)\b"
    r"|\b(?:request|prompt|input|messages?)\s+(?:is\s+|are\s+)?too\s+(?:large|long)\s+for\s+"
    r"(?:(?:this|the)\s+)?(?:model(?:'s)?\s+)?context(?:\s+window)?\b"
    r"|\b(?:input|prompt|request)\s+(?:is\s+)?too\s+(?:long|large)\s+for\s+(?:this|the)\s+model\b"
    r"|\b(?:input|prompt|request|messages?)\b.{0,40}"
    r"\b(?:exceed(?:s|ed)?|overflows?|is\s+larger\s+than)\b.{0,40}"
    r"\b(?:the\s+)?(?:model(?:'s)?\s+)?context(?:\s+(?:length|window))?\b",
    re.IGNORECASE,
)


class _UnsupportedRequestError(LlmError):
    """The request holds something the provider's wire format cannot carry; the
    message names the offending message id and block."""


class _MalformedResponseError(LlmError):
    """A stream event holds a value this adapter cannot turn into a dsh value;
    ``field`` is its path in the provider's event, e.g. ``usage.output_tokens``."""

    def __init__(self, field: str, problem: str) -> None:
        message = f"the provider sent a malformed response: {field} {problem}"
        super().__init__(message, failure=LlmFailure(message=message, code=MALFORMED_RESPONSE))
        self.field = field


def unsupported_block(
    api: str, message_id: str, block_type: str, where: str
) -> _UnsupportedRequestError:
    """The error for a content block that ``api`` cannot carry in ``where``."""
    return _UnsupportedRequestError(
        f"message {message_id!r}: {api} cannot carry a {block_type!r} block in {where}"
    )


class SdkErrors(NamedTuple):
    """The exception classes of one provider SDK, most specific first."""

    status: type[Exception]
    """An HTTP error response (``status_code``, ``response``, ``body``)."""
    timeout: type[Exception]
    connection: type[Exception]
    api: type[Exception]
    """Any other SDK error, e.g. an error payload inside a stream."""


def code_for_status(status: int, detail: str = "") -> str:
    """The failure code for an HTTP error status, as the harness's adapter classifies
    it (llm-deepseek ``httpErrorCode``); ``detail`` is the provider's error code, type
    and message joined, which tells a quota from a rate limit and a context overflow
    from another bad request."""
    if status in (401, 403):
        return AUTH
    if status == 413:
        return INVALID_REQUEST
    if _QUOTA_WORDING.search(detail):
        return QUOTA
    if status == 429:
        return RATE_LIMIT
    if status == 400:
        return CONTEXT_WINDOW_EXCEEDED if _CONTEXT_WORDING.search(detail) else INVALID_REQUEST
    if status >= 500:
        return SERVER
    return http_status_code(status)


def _code_for_error_type(body: object, detail: str) -> str:
    """The code of an error reported without a status (an error event in a stream)."""
    return refined_code(_CODE_BY_ERROR_TYPE.get(_error_type(body) or "", SERVER), detail)


def refined_code(code: str, detail: str) -> str:
    """``code`` of an error reported without a status, sharpened by the provider's
    wording: a rate limit or server error naming an exhausted quota is ``QUOTA``, a
    bad request naming the context bound is ``CONTEXT_WINDOW_EXCEEDED``."""
    if code in (RATE_LIMIT, SERVER) and _QUOTA_WORDING.search(detail):
        return QUOTA
    if code == INVALID_REQUEST and _CONTEXT_WORDING.search(detail):
        return CONTEXT_WINDOW_EXCEEDED
    return code


def retry_after_ms(headers: Mapping[str, str]) -> int | None:
    """The delay the provider asked for: ``retry-after-ms``, or ``retry-after`` in
    seconds or as an HTTP date. ``None`` when absent, unparsable or not positive; an
    absurdly long one is capped at the bound of ``LlmFailure.provider_retry_after_ms``
    (still far past any retry policy's cap, so it reads as "give up", never raises)."""
    for name, scale in (("retry-after-ms", 1.0), ("retry-after", 1000.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            delay_ms = float(raw) * scale
        except ValueError:
            if name == "retry-after-ms":
                continue
            try:
                moment = parsedate_to_datetime(raw).timestamp()
            except (TypeError, ValueError):
                continue
            delay_ms = (moment - time.time()) * 1000.0
        if math.isfinite(delay_ms) and delay_ms > 0:
            return min(math.ceil(delay_ms), JSON_INT_MAX)
    return None


def failure_from_exception(
    error: Exception, sdk: SdkErrors, endpoint: Endpoint, *, streaming: bool
) -> LlmFailure:
    """Classify an exception raised while opening (``streaming=False``) or reading
    (``streaming=True``) a provider stream from ``endpoint``. Never raises: should
    reading the SDK's exception itself fail, the failure says so (``UNKNOWN``)."""
    try:
        return _classified(error, sdk, endpoint, streaming=streaming)
    except Exception as broken:
        logger.warning("a provider failure could not be classified", exc_info=broken)
        return LlmFailure(
            message=f"the model call failed: {describe_exception(error)} "
            f"(and reading it raised {describe_exception(broken)})",
            code=UNKNOWN,
        )


def _classified(
    error: Exception, sdk: SdkErrors, endpoint: Endpoint, *, streaming: bool
) -> LlmFailure:
    if isinstance(error, LlmError) and error.failure is not None:
        return error.failure
    if isinstance(error, sdk.status):
        return _status_failure(error)
    if isinstance(error, sdk.connection | sdk.timeout):
        timed_out = isinstance(error, sdk.timeout)
        return transport_failure(error, endpoint, streaming=streaming, timed_out=timed_out)
    if isinstance(error, sdk.api):
        body = getattr(error, "body", None)
        return LlmFailure(
            message=f"the provider reported an error: {_error_message(body) or _text(error)}",
            code=_code_for_error_type(body, _detail(body, _text(error))),
        )
    if isinstance(error, ValueError):
        return LlmFailure(
            message=f"the provider sent a malformed response: {describe_exception(error)}",
            code=MALFORMED_RESPONSE,
        )
    if streaming:
        # Transport errors the SDK lets through unwrapped while a body is being read.
        return transport_failure(error, endpoint, streaming=True, timed_out=False)
    logger.warning("a model call failed unexpectedly", exc_info=error)
    return LlmFailure(
        message=f"the model call to {endpoint.url} failed: {describe_exception(error)}",
        code=UNKNOWN,
    )


def translation_failure(error: Exception) -> LlmFailure:
    """The failure for an exception raised while turning a stream event into dsh
    chunks: the event held something the adapter could not read. Its traceback is
    logged (logger ``dsh_llm.providers``) unless the error already names the field."""
    if isinstance(error, LlmError) and error.failure is not None:
        return error.failure
    logger.warning("a provider stream event could not be translated", exc_info=error)
    return LlmFailure(
        message=f"the adapter could not read the provider's stream: {describe_exception(error)}",
        code=MALFORMED_RESPONSE,
    )


def _status_failure(error: Exception) -> LlmFailure:
    status: int = getattr(error, "status_code", 0)
    headers: Mapping[str, str] = getattr(getattr(error, "response", None), "headers", {})
    body = getattr(error, "body", None)
    request_id = (
        getattr(error, "request_id", None)
        or headers.get("x-request-id")
        or headers.get("request-id")
    )
    detail = _error_message(body) or _text(error)
    wording = _detail(body, detail)
    if status >= 400:
        code, message, http_status = (
            code_for_status(status, wording),
            f"HTTP {status}: {detail}",
            status,
        )
    else:
        # An error event inside a 200 stream: its body names the kind, there is no status.
        code = _code_for_error_type(body, wording)
        message, http_status = f"error event in the stream: {detail}", None
    return LlmFailure(
        message=message,
        code=code,
        status=http_status,
        provider_retry_after_ms=retry_after_ms(headers),
        request_id=storable_text(request_id)
        if isinstance(request_id, str) and request_id
        else None,
    )


def _error_object(body: object) -> Mapping[str, object] | None:
    if not isinstance(body, Mapping):
        return None
    inner = body.get("error")
    return inner if isinstance(inner, Mapping) else body


def _error_message(body: object) -> str | None:
    error = _error_object(body)
    message = error.get("message") if error is not None else None
    return storable_text(message) if isinstance(message, str) and message else None


def _error_type(body: object) -> str | None:
    error = _error_object(body)
    kind = error.get("type") if error is not None else None
    return kind if isinstance(kind, str) else None


def _detail(body: object, message: str) -> str:
    """The provider's error code, type and message joined, for wording checks."""
    error = _error_object(body)
    parts = [error.get(key) for key in ("code", "type")] if error is not None else []
    return " ".join([*(part for part in parts if isinstance(part, str) and part), message])


def _text(error: BaseException) -> str:
    """The SDK exception's own words (its type when it has none), safely."""
    return describe_exception(error, with_type=False)


__all__ = [
    "SdkErrors",
    "code_for_status",
    "failure_from_exception",
    "refined_code",
    "retry_after_ms",
    "translation_failure",
    "unsupported_block",
]
