"""One valid event of every type, with the optional fields set, for wire-format tests."""

from __future__ import annotations

from typing import Any

from harness_vocab.harness_events import FOREIGN_WIRE, TYPED_WIRE

from dsh_session import EVENT_TYPES, SessionEvent, SessionEventAdapter

from .support import MODEL, assistant, result, user

TOOL_SCHEMA = {"name": "lookup", "description": "Look it up", "parameters": {"type": "object"}}


def every_event() -> list[SessionEvent]:
    """Events of every known type (several reasons and causes), plus an ignorable unknown."""
    wire: list[dict[str, Any]] = [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "step/start", "data": {"turn": 1, "step": 1}},
        {
            "type": "user/message",
            "data": user("hi").model_dump(mode="json"),
            "surfaceOp": "append",
        },
        {
            "type": "agent/inbox/spliced",
            "data": {
                "target": "next-turn",
                "start": 0,
                "removedCount": 1,
                "inserted": [user("later").model_dump(mode="json")],
                "outcome": "canceled",
            },
        },
        {
            "type": "request/header",
            "data": {
                "header": {
                    "config": {**MODEL, "maxTokens": 100, "reasoningEffort": "high", "seed": 7},
                    "system": "be brief",
                    "tools": [TOOL_SCHEMA],
                },
                "reason": "initial",
            },
        },
        {
            "type": "request/context",
            "data": {**MODEL, "contextWindow": 128000},
        },
        {
            "type": "assistant/chunk",
            "data": {
                "turn": 1,
                "step": 1,
                "chunk": {"type": "text-delta", "index": 0, "text": "x"},
            },
        },
        {
            "type": "assistant/message",
            "data": {
                "turn": 1,
                "step": 1,
                "message": assistant("x", calls=("c1",)).model_dump(mode="json"),
                "usage": {"inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 5},
                "interrupted": True,
            },
            "sourceEventSeqs": [6],
            "surfaceOp": "append",
        },
        {
            "type": "tool/call",
            "data": {"turn": 1, "step": 1, "callId": "c1", "name": "lookup", "arguments": "{}"},
        },
        {
            "type": "tool/result",
            "data": {
                "turn": 1,
                "step": 1,
                "message": result("c1").model_dump(mode="json"),
                "error": {"name": "ToolFailedError", "code": "TOOL_FAILED"},
                "meta": {"display": ["a", 1, None, {"nested": True}]},
            },
            "sourceEventSeqs": [8],
            "surfaceOp": {"op": "replace", "start": 7, "end": 7},
        },
        {"type": "step/end", "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
        {"type": "turn/end", "data": {"turn": 2, "reason": {"kind": "blocked"}}},
        {"type": "turn/end", "data": {"turn": 3, "reason": {"kind": "max-tokens"}}},
        {"type": "turn/end", "data": {"turn": 4, "reason": {"kind": "interrupted"}}},
        {
            "type": "turn/end",
            "data": {
                "turn": 5,
                "reason": {"kind": "error", "error": {"message": "boom", "code": "UNKNOWN"}},
            },
        },
        *(
            {
                "type": "turn/end",
                "data": {"turn": 6, "reason": {"kind": "aborted", "reason": cause}},
            }
            for cause in (
                {"kind": "user"},
                {"kind": "parent"},
                {"kind": "hook", "reason": "policy"},
                {"kind": "disposed"},
                {"kind": "legacy"},
            )
        ),
        {"type": "session/end-seed", "data": {}},
        *TYPED_WIRE,
        *FOREIGN_WIRE,
        {"type": "plugin/note", "data": {"any": ["json", 1]}, "ignorable": True},
    ]
    events: list[SessionEvent] = [
        SessionEventAdapter.validate_python({**item, "seq": seq, "time": 1_700_000_000_000 + seq})
        for seq, item in enumerate(wire)
    ]
    assert {event.type for event in events} >= EVENT_TYPES
    return events
