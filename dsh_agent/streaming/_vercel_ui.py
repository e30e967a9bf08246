"""The Vercel AI SDK *UI message stream* (v1) of a session: updates in, parts out.

The protocol streams one assistant message at a time, ``start {messageId}`` to
``finish``, with text, reasoning and tool parts inside. dsh's assistant messages are
one model step each, so each becomes one UI message whose ``messageId`` is the
``MessageId``; its text and reasoning parts use that id as their part id too, and a
tool part its ``CallId``. A message stays open after its commit while its tool calls
run, so their outputs land in it, and closes when the next message, a user message or
the turn's end comes. Facts the protocol has no part for (user messages, turns,
failed attempts, retries, inbox and status) are *transient* ``data-dsh-*`` parts,
which a client receives without storing them in a message; those about a message
carry its id. Every part fits the protocol's strict part schema.
"""

from __future__ import annotations

import json
from typing import Any

from dsh_agent._live_updates import MessageClaimed, MessageDiscarded, MessageQueued, StatusUpdate
from dsh_agent.streaming._updates import (
    AgentUpdate,
    ApprovalAsked,
    AssistantCommitted,
    AssistantFailed,
    ReasoningDelta,
    RetryScheduled,
    TextDelta,
    ToolCallCommitted,
    ToolResultCommitted,
    TurnEnded,
    TurnStarted,
    UserMessageEntered,
)
from dsh_llm._content import ReasoningBlock, TextBlock, ToolCallBlock
from dsh_llm._ids import CallId, MessageId
from dsh_session.events import ErrorReason

VercelUiPart = dict[str, Any]
"""One part of a UI message stream as its JSON object (``type`` first)."""

VERCEL_UI_STREAM_HEADERS = {"x-vercel-ai-ui-message-stream": "v1"}
"""The header that marks a response as a UI message stream (besides its SSE type)."""

VERCEL_UI_DONE = "data: [DONE]\n\n"
"""The SSE line that ends a UI message stream."""


class _OpenMessage:
    """The UI message being streamed: what its parts have sent so far."""

    __slots__ = ("calls", "message_id", "reasoning", "reasoning_open", "text", "text_open")

    def __init__(self, message_id: MessageId) -> None:
        self.message_id = message_id
        self.text = ""
        self.reasoning = ""
        self.text_open = False
        self.reasoning_open = False
        self.calls: set[CallId] = set()


class VercelUiEncoder:
    """Translates a session's updates, in order, into UI message stream parts; call
    :meth:`close` at the end to finish a message still open."""

    def __init__(self) -> None:
        self._open: _OpenMessage | None = None
        self._calls: dict[CallId, tuple[MessageId, str, str]] = {}
        """Each call committed so far: its message, tool name and raw arguments."""

    def encode(self, update: AgentUpdate) -> list[VercelUiPart]:
        """The parts ``update`` stands for (possibly none)."""
        if isinstance(update, TextDelta | ReasoningDelta):
            reasoning = isinstance(update, ReasoningDelta)
            return self._delta(update.message_id, update.text, reasoning=reasoning)
        if isinstance(update, AssistantCommitted):
            return self._commit(update)
        if isinstance(update, AssistantFailed):
            return self._failed(update)
        if isinstance(update, ToolCallCommitted):
            self._calls[update.call_id] = (update.message_id, update.name, update.arguments)
            return []  # its input was available at the commit
        if isinstance(update, ApprovalAsked):
            self._calls[update.call_id] = (update.message_id, update.tool_name, update.arguments)
            parts = self._in_message_of(update.call_id)
            request = {"approvalId": update.request_id, "toolCallId": update.call_id}
            return [*parts, {"type": "tool-approval-request", **request}]
        if isinstance(update, ToolResultCommitted):
            return self._tool_result(update)
        if isinstance(update, UserMessageEntered):
            text = "".join(b.text for b in update.message.content if isinstance(b, TextBlock))
            entered = {"id": update.message_id, "text": text, "seq": update.seq}
            return [*self.close(), _data("user-message", entered, update.message_id)]
        if isinstance(update, TurnStarted):
            return [*self.close(), _data("turn-start", {"turn": update.turn, "seq": update.seq})]
        if isinstance(update, TurnEnded):
            return [*self.close(), _data("turn-end", _turn_end(update))]
        if isinstance(update, RetryScheduled):
            return [_data("retry", _retry(update))]
        if isinstance(update, MessageQueued | MessageDiscarded | MessageClaimed):
            change = {MessageQueued: "queued", MessageDiscarded: "discarded"}.get(
                type(update), "claimed"
            )
            inbox = {"change": change, "messageId": update.message_id}
            return [_data("inbox", inbox, update.message_id)]
        if isinstance(update, StatusUpdate):
            return [_data("status", {"status": update.status})]
        return []  # AssistantStarted: the message opens with its first text

    def close(self, finish_reason: str = "stop") -> list[VercelUiPart]:
        """Finish the message still open, if any."""
        message, self._open = self._open, None
        if message is None:
            return []
        ended = _end_parts(message)
        reason = "tool-calls" if message.calls and finish_reason == "stop" else finish_reason
        return [*ended, {"type": "finish-step"}, {"type": "finish", "finishReason": reason}]

    # --- messages ---------------------------------------------------------------------

    def _message(self, message_id: MessageId) -> tuple[_OpenMessage, list[VercelUiPart]]:
        """The open message ``message_id``, opened now (closing another) if needed."""
        if self._open is not None and self._open.message_id == message_id:
            return self._open, []
        parts = self.close()
        self._open = _OpenMessage(message_id)
        start = {"type": "start", "messageId": message_id}
        return self._open, [*parts, start, {"type": "start-step"}]

    def _delta(self, message_id: MessageId, text: str, *, reasoning: bool) -> list[VercelUiPart]:
        message, parts = self._message(message_id)
        kind = "reasoning" if reasoning else "text"
        if reasoning and message.text_open:
            message.text_open = False
            parts.append({"type": "text-end", "id": message_id})
        if not reasoning and message.reasoning_open:
            message.reasoning_open = False
            parts.append({"type": "reasoning-end", "id": message_id})
        if not (message.reasoning_open if reasoning else message.text_open):
            parts.append({"type": f"{kind}-start", "id": message_id})
            if reasoning:
                message.reasoning_open = True
            else:
                message.text_open = True
        if text:
            if reasoning:
                message.reasoning += text
            else:
                message.text += text
            parts.append({"type": f"{kind}-delta", "id": message_id, "delta": text})
        return parts

    def _commit(self, update: AssistantCommitted) -> list[VercelUiPart]:
        """Send what the deltas did not, close the text parts, make the calls'
        input available; a message without calls is finished at once."""
        message_id, content = update.message_id, update.message.content
        message, parts = self._message(message_id)
        for reasoning, kind in ((True, ReasoningBlock), (False, TextBlock)):
            committed = "".join(b.text for b in content if isinstance(b, kind))
            sent = message.reasoning if reasoning else message.text
            missing = committed[len(sent) :]
            if not committed.startswith(sent):  # the deltas drew something else:
                _restart(message, reasoning=reasoning)  # restart the part with the commit
                missing = committed
            if missing:
                parts += self._delta(message_id, missing, reasoning=reasoning)
        parts += _end_parts(message)
        for block in content:
            if isinstance(block, ToolCallBlock):
                self._calls[block.call_id] = (message_id, block.name, block.arguments)
                message.calls.add(block.call_id)
                parts.append(_input_available(block.call_id, block.name, block.arguments))
        if not message.calls:
            parts += self.close("other" if update.interrupted else "stop")
        return parts

    def _failed(self, update: AssistantFailed) -> list[VercelUiPart]:
        failed = {
            "messageId": update.message_id,
            "code": update.failure.code,
            "message": update.failure.message,
            "seq": update.seq,
        }
        parts = [_data("message-failed", failed, update.message_id)]
        if self._open is not None and self._open.message_id == update.message_id:
            return self.close("error") + parts
        return parts

    def _in_message_of(self, call_id: CallId) -> list[VercelUiPart]:
        """Open the message that asked for ``call_id`` (a stream resumed after its
        commit), with the call's input, if it is not the open one."""
        known = self._calls.get(call_id)
        if known is None:
            return []
        message_id, name, arguments = known
        message, parts = self._message(message_id)
        if call_id not in message.calls:
            message.calls.add(call_id)
            parts.append(_input_available(call_id, name, arguments))
        return parts

    def _tool_result(self, update: ToolResultCommitted) -> list[VercelUiPart]:
        parts = self._in_message_of(update.call_id)
        result = update.message.content[0]
        output = "".join(b.text for b in result.content if isinstance(b, TextBlock))
        if update.is_error:
            return [*parts, {"type": "tool-output-error", "toolCallId": update.call_id,
                             "errorText": output}]  # fmt: skip
        return [*parts, {"type": "tool-output-available", "toolCallId": update.call_id,
                         "output": output}]  # fmt: skip


def _restart(message: _OpenMessage, *, reasoning: bool) -> None:
    """Its next delta starts the part again (a ``*-start`` for a known id restarts it)."""
    if reasoning:
        message.reasoning, message.reasoning_open = "", False
    else:
        message.text, message.text_open = "", False


def _end_parts(message: _OpenMessage) -> list[VercelUiPart]:
    parts: list[VercelUiPart] = []
    if message.reasoning_open:
        parts.append({"type": "reasoning-end", "id": message.message_id})
    if message.text_open:
        parts.append({"type": "text-end", "id": message.message_id})
    message.reasoning_open = message.text_open = False
    return parts


def _input_available(call_id: CallId, name: str, arguments: str) -> VercelUiPart:
    """The call's input as JSON (its raw text when the model sent no valid JSON)."""
    try:
        value: Any = json.loads(arguments) if arguments else {}
    except ValueError:
        value = arguments
    return {"type": "tool-input-available", "toolCallId": call_id, "toolName": name, "input": value}


def _data(name: str, value: dict[str, Any], part_id: str | None = None) -> VercelUiPart:
    part: VercelUiPart = {"type": f"data-dsh-{name}"}
    if part_id is not None:
        part["id"] = part_id
    part["data"] = value
    part["transient"] = True
    return part


def _turn_end(update: TurnEnded) -> dict[str, Any]:
    ended: dict[str, Any] = {"turn": update.turn, "reason": update.kind, "seq": update.seq}
    if isinstance(update.reason, ErrorReason):
        ended["code"] = update.reason.error.code
        ended["message"] = update.reason.error.message
    return ended


def _retry(update: RetryScheduled) -> dict[str, Any]:
    return {
        "turn": update.turn,
        "step": update.step,
        "retry": update.retry,
        "maxRetries": update.max_retries,
        "delayMs": update.delay_ms,
        "code": update.failure.code,
        "message": update.failure.message,
        "seq": update.seq,
    }


__all__ = [
    "VERCEL_UI_DONE",
    "VERCEL_UI_STREAM_HEADERS",
    "VercelUiEncoder",
    "VercelUiPart",
]
