"""Gemini ``streamGenerateContent?alt=sse`` chunks in the shapes Google documents and
the ``google-genai`` tests record: one ``GenerateContentResponse`` JSON object per
``data:`` line, events ended by CRLF CRLF, camelCase fields, thought signatures as
standard base64, ``usageMetadata`` on every chunk, and an error after a 200 written
as a bare (pretty-printed) JSON error object."""

from __future__ import annotations

import json
from typing import Any

MODEL = "gemini-test"
PATH = f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"


def gemini_chunk(
    *parts: dict[str, Any],
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    **extra: Any,
) -> bytes:
    """One chunk: candidate 0 with ``parts`` (none: no content), optionally finished."""
    candidate: dict[str, Any] = {"index": 0}
    if parts:
        candidate["content"] = {"role": "model", "parts": list(parts)}
    if finish_reason is not None:
        candidate["finishReason"] = finish_reason
    body: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": MODEL,
        "responseId": "resp-1",
        **extra,
    }
    if usage is not None:
        body["usageMetadata"] = usage
    return f"data: {json.dumps(body)}\r\n\r\n".encode()


def gemini_usage(prompt: int, candidates: int, **extra: int) -> dict[str, int]:
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + extra.get("thoughtsTokenCount", 0),
        **extra,
    }


def gemini_text_reply(text: str, finish_reason: str = "STOP") -> list[bytes]:
    return [
        gemini_chunk({"text": text}, usage=gemini_usage(5, 2)),
        gemini_chunk({"text": ""}, finish_reason=finish_reason, usage=gemini_usage(5, 3)),
    ]


def gemini_error_body(code: int, message: str, status: str, **error: Any) -> dict[str, Any]:
    """Google's error body: ``{"error": {"code", "message", "status", ...}}``."""
    return {"error": {"code": code, "message": message, "status": status, **error}}


def gemini_error_after_data(code: int, message: str, status: str) -> bytes:
    """An error reported after the 200: a bare JSON object over several lines."""
    text = json.dumps(gemini_error_body(code, message, status), indent=2)
    return (text + "\n").encode()


__all__ = [
    "MODEL",
    "PATH",
    "gemini_chunk",
    "gemini_error_after_data",
    "gemini_error_body",
    "gemini_text_reply",
    "gemini_usage",
]
