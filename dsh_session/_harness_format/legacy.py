"""Records older than message identities, converted the way the harness reads them.

Source: session-persistence/src/coordinator.ts (``migrateLegacy*``, applied to every
stored event in order before validation). Storage is never rewritten; this is a view.
A message persisted without an id gets ``legacy-message:<session-id>:<seq>``; a tool
result that replaces another inherits the id of the event it replaces. Records that look
current pass through untouched, so corruption is not disguised as legacy data.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeGuard

from dsh_session.errors import LegacyRecordError

Json = dict[str, Any]

_STEERING = "steering/message"
_UNCHANGED_END_KINDS = ("completed", "blocked", "max-tokens", "interrupted")
_FAILURE_OPTIONAL = ("status", "providerRetryAfterMs", "requestId")


def legacy_message_id(session_id: str, seq: int) -> str:
    """The deterministic id the harness gives a pre-identity message."""
    return f"legacy-message:{session_id}:{seq}"


def _has_only(record: Json, required: Iterable[str], optional: Iterable[str] = ()) -> bool:
    required = tuple(required)
    allowed = set(required) | set(optional)
    return set(record) <= allowed and all(key in record for key in required)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _refuse(session_id: str, event: Json, what: str) -> LegacyRecordError:
    seq = event.get("seq")
    return LegacyRecordError(
        f"session {session_id!r} holds a malformed pre-react-loop {what} at seq {seq}",
        seq=seq if _is_int(seq) else None,
        field="data",
    )


def _turn_start(event: Json, session_id: str) -> Json:
    data = event.get("data")
    if event.get("type") != "turn/start" or not isinstance(data, dict) or "trigger" not in data:
        return event
    trigger = data["trigger"]
    turn = data.get("turn")
    if (
        not _is_int(turn)
        or turn < 1
        or not _has_only(data, ("turn", "trigger"))
        or not isinstance(trigger, dict)
        or not isinstance(trigger.get("kind"), str)
        or not trigger["kind"]
    ):
        raise _refuse(session_id, event, "turn/start")
    return {**event, "data": {"turn": turn}}


def _legacy_failure(reason: Json) -> Json | None:
    failure = reason.get("failure")
    if not isinstance(failure, dict) or not _has_only(reason, ("kind", "step", "failure")):
        return None
    if not _has_only(failure, ("message", "code"), _FAILURE_OPTIONAL):
        return None
    typed = isinstance(failure["message"], str) and isinstance(failure["code"], str)
    status_ok = "status" not in failure or isinstance(failure["status"], (int, float))
    retry = failure.get("providerRetryAfterMs")
    retry_ok = retry is None or isinstance(retry, (int, float))
    request_ok = "requestId" not in failure or isinstance(failure["requestId"], str)
    return failure if typed and status_ok and retry_ok and request_ok else None


def _end_reason(reason: Json, refusal: Callable[[], LegacyRecordError]) -> Json | None:
    """The current reason for an old one; ``None`` when the reason is already current."""
    kind = reason["kind"]
    if kind in _UNCHANGED_END_KINDS and len(reason) == 1:
        return None  # almost every turn/end: nothing to check further, nothing to build
    refuse = refusal()
    if kind in _UNCHANGED_END_KINDS:
        if not _has_only(reason, ("kind",)):
            raise refuse
        return None
    if kind == "aborted":
        if "reason" in reason:
            return None
        if not _has_only(reason, ("kind",)):
            raise refuse
        return {"kind": "aborted", "reason": {"kind": "legacy"}}
    if kind == "disposed":
        if not _has_only(reason, ("kind",)):
            raise refuse
        return {"kind": "aborted", "reason": {"kind": "disposed"}}
    if kind != "error" or "error" in reason:
        return None
    step = reason.get("step")
    if not _is_int(step) or step < 0:
        raise refuse
    failure = _legacy_failure(reason)
    if failure is not None:
        return {"kind": "error", "error": failure}
    keys = ("kind", "step", "message") + (() if reason.get("code") is None else ("code",))
    code = reason.get("code")
    if not _has_only(reason, keys) or not isinstance(reason.get("message"), str):
        raise refuse
    if code is not None and not isinstance(code, str):
        raise refuse
    return {"kind": "error", "error": {"message": reason["message"], "code": code or "UNKNOWN"}}


def _turn_end(event: Json, session_id: str) -> Json:
    data = event.get("data")
    if event.get("type") != "turn/end" or not isinstance(data, dict):
        return event
    refusal = functools.partial(_refuse, session_id, event, "turn/end")
    reason = data.get("reason")
    turn = data.get("turn")
    if (
        not _is_int(turn)
        or turn < 1
        or not _has_only(data, ("turn", "reason"))
        or not isinstance(reason, dict)
        or not isinstance(reason.get("kind"), str)
    ):
        raise refusal()
    current = _end_reason(reason, refusal)
    return event if current is None else {**event, "data": {**data, "reason": current}}


def _steering(event: Json, session_id: str) -> Json:
    if event.get("type") != _STEERING:
        return event
    data = event.get("data")
    if not isinstance(data, dict):
        raise _refuse(session_id, event, _STEERING)
    wrapped = data.get("message")
    if (
        isinstance(wrapped, dict)
        and _is_int(data.get("turn"))
        and _has_only(data, ("turn", "message"))
    ):
        return {**event, "type": "user/message", "data": wrapped}
    if not _is_int(data.get("turn")) or not _has_only(data, ("turn", "content", "source")):
        raise _refuse(session_id, event, _STEERING)
    message = {k: v for k, v in data.items() if k != "turn"}
    message["id"] = legacy_message_id(session_id, event["seq"])
    message["role"] = "user"
    return {**event, "type": "user/message", "data": message}


def _replaced_start(event: Json) -> int | None:
    op = event.get("surfaceOp")
    if isinstance(op, dict) and op.get("op") == "replace" and _is_int(op.get("start")):
        return int(op["start"])
    return None


def _message(event: Json, session_id: str, ids: dict[int, str]) -> Json:
    data = event.get("data")
    kind = event.get("type")
    if not isinstance(data, dict):
        return event
    if kind == "user/message":
        if any(k in data for k in ("id", "role", "message")) or not (
            "content" in data and "source" in data
        ):
            return event
        upgraded = {**data, "id": legacy_message_id(session_id, event["seq"]), "role": "user"}
        return {**event, "data": upgraded}
    if kind == "assistant/message":
        if "message" in data or "content" not in data or "provenance" not in data:
            return event
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        provenance = data["provenance"] if isinstance(data["provenance"], dict) else {}
        rest["message"] = {
            "id": legacy_message_id(session_id, event["seq"]),
            "role": "assistant",
            "content": data["content"],
            "source": {**provenance, "kind": "model"},
        }
        return {**event, "data": rest}
    if kind == "tool/result":
        if "message" in data or not all(k in data for k in ("callId", "content", "isError")):
            return event
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        start = _replaced_start(event)
        message: Json = {
            "id": legacy_message_id(session_id, event["seq"]) if start is None else ids.get(start),
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": data["callId"],
                    "content": data["content"],
                    "isError": data["isError"],
                }
            ],
            "source": {"kind": "tool", "callId": data["callId"]},
        }
        if message["id"] is None:
            del message["id"]
        rest["message"] = message
        return {**event, "data": rest}
    return event


def _message_id(event: Json) -> str | None:
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    message = data if event.get("type") == "user/message" else data.get("message")
    identity = message.get("id") if isinstance(message, dict) else None
    return identity if isinstance(identity, str) else None


_TYPE_RULES = {"turn/start": _turn_start, "turn/end": _turn_end, _STEERING: _steering}
"""The legacy rules that apply to one record type each; ``_message`` comes after them
(a converted ``steering/message`` is a ``user/message``)."""
_MESSAGE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})


def migrate_legacy_events(events: Iterable[Any], session_id: str) -> list[Any]:
    """The events as the harness holds them after load: legacy records converted in
    order (turn/start trigger, turn/end reason, steering/message, pre-identity messages),
    every other record returned as is."""
    ids: dict[int, str] = {}
    out: list[Any] = []
    for event in events:
        if not isinstance(event, dict):
            out.append(event)
            continue
        kind = event.get("type")
        data = event.get("data")
        if kind == "assistant/chunk" and isinstance(data, dict) and "message" not in data:
            out.append(event)  # most of a streamed log; nothing legacy, no message id
            continue
        if isinstance(kind, str):
            rule = _TYPE_RULES.get(kind)
            if rule is not None:
                event = rule(event, session_id)
                kind = event["type"]
            if kind in _MESSAGE_TYPES:
                event = _message(event, session_id, ids)
        identity = _message_id(event)
        if identity is not None and _is_int(event.get("seq")):
            ids[event["seq"]] = identity
        out.append(event)
    return out


__all__ = [
    "Json",
    "legacy_message_id",
    "migrate_legacy_events",
]
