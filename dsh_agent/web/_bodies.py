"""Request bodies: read within the size limit, parsed as a JSON object, checked for
unknown fields, and turned into the values :class:`~dsh_agent.RemoteAgent` takes. Every
problem is a :class:`_RequestProblem` naming it, raised before anything is written."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request

from dsh_agent.web._problems import _RequestProblem
from dsh_llm._create import freeze_message
from dsh_llm._messages import UserMessage
from dsh_session._mailbox._records import POLICIES, DeliveryPolicy

DEFAULT_MAX_BODY = 1 << 20
"""Bytes a request body may have unless ``create_app(max_body=...)`` says otherwise."""


async def read_object(
    request: Request, allowed: Collection[str], *, max_body: int
) -> dict[str, Any]:
    """The body as a JSON object whose keys are all in ``allowed`` (an empty body is
    ``{}``)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body:
        raise _RequestProblem(413, f"the body has {declared} bytes; the limit is {max_body}")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            raise _RequestProblem(413, f"the body is over the limit of {max_body} bytes")
    if not body.strip():
        return {}
    try:
        parsed = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _RequestProblem(400, f"the body is not valid JSON: {error}") from None
    if not isinstance(parsed, dict):
        raise _RequestProblem(400, f"the body must be a JSON object, not {type(parsed).__name__}")
    unknown = sorted(set(parsed) - set(allowed))
    if unknown:
        raise _RequestProblem(
            400, f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
        )
    return parsed


def optional_str(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise _RequestProblem(400, f"field {key!r} must be a string, not {type(value).__name__}")
    return value


def policy_of(body: Mapping[str, Any]) -> DeliveryPolicy:
    policy = body.get("policy", "enqueue")
    if policy not in POLICIES:
        raise _RequestProblem(
            400, f"field 'policy' must be one of {sorted(POLICIES)}, not {policy!r}"
        )
    return policy  # type: ignore[no-any-return]


def flag(body: Mapping[str, Any], key: str) -> bool:
    value = body.get(key, False)
    if not isinstance(value, bool):
        raise _RequestProblem(400, f"field {key!r} must be true or false, not {value!r}")
    return value


MESSAGE_FIELDS = ("message", "id", "content", "policy")


def user_message(body: Mapping[str, Any]) -> UserMessage:
    """The message the client minted: ``{"message": <a whole user message>}`` or
    ``{"id": ..., "content": <text or blocks>}`` (a user-sourced prompt). The id is the
    client's, and the idempotency key of the delivery."""
    whole = body.get("message")
    if whole is not None:
        if "id" in body or "content" in body:
            raise _RequestProblem(400, "give either 'message' or 'id' and 'content', not both")
        raw = whole
    else:
        if "id" not in body or "content" not in body:
            raise _RequestProblem(
                400, "a message needs 'message' (a whole user message) or 'id' and 'content'"
            )
        content = body["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        raw = {"id": body["id"], "role": "user", "content": blocks, "source": {"kind": "user"}}
    if not isinstance(raw, dict):
        raise _RequestProblem(400, f"'message' must be a JSON object, not {type(raw).__name__}")
    try:
        message = freeze_message(raw)
    except ValidationError as error:
        raise _RequestProblem(400, f"invalid message: {_first_errors(error)}") from None
    if not isinstance(message, UserMessage):
        raise _RequestProblem(400, f"a client sends user messages, not role {message.role!r}")
    return message


def _first_errors(error: ValidationError) -> str:
    parts = []
    for detail in error.errors()[:3]:
        where = ".".join(str(p) for p in detail["loc"]) or "message"
        parts.append(f"{where}: {detail['msg']}")
    return "; ".join(parts)


__all__ = [
    "DEFAULT_MAX_BODY",
    "MESSAGE_FIELDS",
    "flag",
    "optional_str",
    "policy_of",
    "read_object",
    "user_message",
]
