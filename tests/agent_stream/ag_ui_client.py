"""A small AG-UI client for tests: parses SSE lines, validates every event with the
protocol's own models (``ag-ui-protocol``), and renders the messages a UI would show,
keyed by the ids on the wire."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import Event
from pydantic import TypeAdapter

_EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The JSON events of an SSE body, each checked against the AG-UI schema."""
    events = []
    for chunk in text.split("\n\n"):
        if not chunk.strip():
            continue
        assert chunk.startswith("data: "), chunk
        event = json.loads(chunk[len("data: ") :])
        _EVENT.validate_python(event)
        events.append(event)
    return events


@dataclass
class Rendered:
    """The UI's messages by id, in first-seen order, and its custom notices."""

    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    custom: list[dict[str, Any]] = field(default_factory=list)
    open: set[str] = field(default_factory=set)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)

    def new(self, message_id: str, **fields: Any) -> dict[str, Any]:
        assert message_id not in self.messages, f"id {message_id} minted twice on the wire"
        message = self.messages[message_id] = {"id": message_id, **fields}
        return message

    def apply(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind in ("TEXT_MESSAGE_START", "REASONING_MESSAGE_START"):
            role = event.get("role", "assistant")
            existing = self.messages.get(event["messageId"])
            if existing is None:
                self.new(event["messageId"], role=role, content="")
            else:  # a tool call opened the assistant message first
                assert existing["role"] == role
            self.open.add(event["messageId"])
        elif kind in ("TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"):
            assert event["messageId"] in self.open, event
            self.messages[event["messageId"]]["content"] += event["delta"]
        elif kind in ("TEXT_MESSAGE_END", "REASONING_MESSAGE_END"):
            self.open.remove(event["messageId"])
        elif kind == "TOOL_CALL_START":
            parent = self.messages.get(event["parentMessageId"]) or self.new(
                event["parentMessageId"], role="assistant", content=""
            )
            call = {"id": event["toolCallId"], "name": event["toolCallName"], "arguments": ""}
            assert event["toolCallId"] not in self.calls
            parent.setdefault("toolCalls", []).append(call)
            self.calls[event["toolCallId"]] = call
        elif kind == "TOOL_CALL_ARGS":
            self.calls[event["toolCallId"]]["arguments"] += event["delta"]
        elif kind == "TOOL_CALL_RESULT":
            assert event["toolCallId"] in self.calls
            self.new(
                event["messageId"],
                role="tool",
                toolCallId=event["toolCallId"],
                content=event["content"],
            )
        elif kind == "CUSTOM":
            self.custom.append(event)


def render(events: list[dict[str, Any]]) -> Rendered:
    assert events[0]["type"] == "RUN_STARTED"
    assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")
    rendered = Rendered()
    for event in events:
        rendered.apply(event)
    assert not rendered.open, f"messages left open: {rendered.open}"
    return rendered
