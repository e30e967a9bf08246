"""The canonical ``LlmFailure.code`` values: the TypeScript harness's own codes
(llm/llm error.ts, retry-policy.ts, llm-deepseek adapter.ts), so a retry or recovery
policy reads the same facts from a log whichever side wrote it. Codes are plain strings:
a reader must accept any code, including the older dsh names in earlier logs."""

from __future__ import annotations

RATE_LIMIT = "RATE_LIMIT"
"""HTTP 429 that is not an exhausted quota."""
QUOTA = "QUOTA"
"""The account's quota, balance or credit is exhausted (checked before 429)."""
SERVER = "SERVER"
"""HTTP >= 500 (overload included), or an error the provider reported in its stream."""
TIMEOUT = "TIMEOUT"
"""The request or the stream stayed silent too long."""
TRANSPORT = "TRANSPORT"
"""The connection failed or broke off."""
STREAM_CLOSED = "STREAM_CLOSED"
"""The stream ended cleanly but before the model finished."""
EMPTY_RESPONSE = "EMPTY_RESPONSE"
"""The stream completed with nothing usable."""
MALFORMED_RESPONSE = "MALFORMED_RESPONSE"
"""The provider sent something the adapter cannot read, or a chunk sequence that cannot
be assembled."""
CONTEXT_WINDOW_EXCEEDED = "CONTEXT_WINDOW_EXCEEDED"
"""HTTP 400 naming the model's context bound."""
INVALID_REQUEST = "INVALID_REQUEST"
"""Any other HTTP 400, and 413."""
AUTH = "AUTH"
"""HTTP 401 or 403."""
INVALID_CREDENTIAL = "INVALID_CREDENTIAL"
"""A credential was supplied but cannot be used."""
ABORTED = "ABORTED"
"""The caller cancelled."""
UNKNOWN = "UNKNOWN"
"""Any other error, flattened to its message."""
USAGE_LIMIT_EXCEEDED = "USAGE_LIMIT_EXCEEDED"
"""dsh's own: the agent's usage limits refused the next request or tool calls (the
harness has no usage limits; its reader takes any code)."""

UNSUPPORTED_CONTENT = "UNSUPPORTED_CONTENT"
"""The request holds content the provider's wire format cannot carry (an attachment's
media type it does not take); the harness's code."""
ATTACHMENT_NOT_FOUND = "ATTACHMENT_NOT_FOUND"
"""An attachment's bytes could not be had when the request was built: no store to read
them from, or the store has none for that hash (the harness's code)."""
ATTACHMENT_CORRUPT = "ATTACHMENT_CORRUPT"
"""The stored bytes of an attachment do not hash to its reference (the harness's code)."""

RETRYABLE_CODES: frozenset[str] = frozenset(
    {EMPTY_RESPONSE, RATE_LIMIT, SERVER, TIMEOUT, TRANSPORT}
)
"""The harness's default retryable set."""


def http_status_code(status: int) -> str:
    """``HTTP_<status>``: the code of a non-2xx status no other code covers."""
    return f"HTTP_{status}"


def stop_reason_code(reason: str | None) -> str:
    """The code of a stop reason the adapter does not map (``content_filter``,
    ``refusal``, ...): the reason upper-cased, as the harness's adapter does."""
    return reason.upper().replace("-", "_") if reason else UNKNOWN


__all__ = [
    "ABORTED",
    "ATTACHMENT_CORRUPT",
    "ATTACHMENT_NOT_FOUND",
    "AUTH",
    "CONTEXT_WINDOW_EXCEEDED",
    "EMPTY_RESPONSE",
    "INVALID_CREDENTIAL",
    "INVALID_REQUEST",
    "MALFORMED_RESPONSE",
    "QUOTA",
    "RATE_LIMIT",
    "RETRYABLE_CODES",
    "SERVER",
    "STREAM_CLOSED",
    "TIMEOUT",
    "TRANSPORT",
    "UNKNOWN",
    "UNSUPPORTED_CONTENT",
    "USAGE_LIMIT_EXCEEDED",
    "http_status_code",
    "stop_reason_code",
]
