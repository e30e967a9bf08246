"""The AG-UI event stream of a run: updates in, SSE ``data:`` lines out.

AG-UI is message-centric like dsh: every assistant message, tool message and user
message has its own id on the wire, and a tool call names its parent message. So the
wire ids *are* dsh's ids: ``threadId`` is the session id, ``messageId`` the
``MessageId``, ``toolCallId`` the ``CallId``. The one derived id is a reasoning
message's, ``<MessageId>.reasoning``, because AG-UI keeps reasoning as a message of its
own while dsh keeps it as blocks of the assistant message. dsh-only facts (inbox,
status, turn ends, failed model calls, scheduled retries, approvals asked) travel as
``CUSTOM`` events named ``dsh.*``.

No web framework is needed: :class:`AgUiEncoder` is a pure translation, and
:func:`ag_ui_sse` turns an update stream into the lines an HTTP response writes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

from dsh_agent._live_updates import (
    MessageClaimed,
    MessageDiscarded,
    MessageQueued,
    StatusUpdate,
)
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
from dsh_llm._content import ContentBlock, ReasoningBlock, TextBlock
from dsh_llm._failure import describe_exception
from dsh_llm._ids import MessageId
from dsh_session.events import AbortedReason, ErrorReason

AgUiEvent = dict[str, Any]
"""One AG-UI event as its JSON object (camelCase keys, ``type`` first)."""

SSE_MEDIA_TYPE = "text/event-stream"


def reasoning_message_id(message_id: MessageId) -> str:
    """The AG-UI id of the reasoning of assistant message ``message_id``."""
    return f"{message_id}.reasoning"


_LINE_BREAKS_KEPT_RAW = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})
"""The characters ``str.splitlines`` (and so ``httpx``'s ``aiter_lines``) breaks lines
at that ``json.dumps(ensure_ascii=False)`` leaves raw: outside strings JSON never has
them, so escaping them in place keeps the JSON equal and each event on one line."""


def sse_line(event: AgUiEvent) -> str:
    """One server-sent event: ``data: <json>`` and a blank line."""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"data: {data.translate(_LINE_BREAKS_KEPT_RAW)}\n\n"


def _text_of(blocks: Iterable[ContentBlock], kind: type[TextBlock | ReasoningBlock]) -> str:
    return "".join(block.text for block in blocks if isinstance(block, kind))


class AgUiEncoder:
    """Translates the updates of one run into AG-UI events, in order. Call
    :meth:`start`, then :meth:`encode` for each update, then :meth:`finish`."""

    def __init__(self, *, thread_id: str, run_id: str) -> None:
        self._thread_id = thread_id
        self._run_id = run_id
        self._text: dict[MessageId, str] = {}
        """Text streamed so far per assistant message (present = message open)."""
        self._reasoning: dict[MessageId, str] = {}
        self._open_reasoning: MessageId | None = None
        self._last_end: TurnEnded | None = None

    def start(self) -> list[AgUiEvent]:
        return [{"type": "RUN_STARTED", "threadId": self._thread_id, "runId": self._run_id}]

    def encode(self, update: AgentUpdate) -> list[AgUiEvent]:
        """The AG-UI events ``update`` stands for (possibly none)."""
        if isinstance(update, TextDelta):
            return self._close_reasoning() + self._text_delta(update.message_id, update.text)
        if isinstance(update, ReasoningDelta):
            return self._reasoning_delta(update.message_id, update.text)
        if isinstance(update, AssistantCommitted):
            return self._commit(update)
        if isinstance(update, AssistantFailed):
            failed = {"messageId": update.message_id, "code": update.failure.code}
            events = self._close(update.message_id)
            return [*events, _custom("dsh.message-failed", {**failed, "seq": update.seq})]
        if isinstance(update, ToolCallCommitted):
            return self._tool_call(update)
        if isinstance(update, ToolResultCommitted):
            result = update.message.content[0]
            content = _text_of(result.content, TextBlock)
            return [
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": update.message_id,
                    "toolCallId": update.call_id,
                    "content": content,
                    "role": "tool",
                }
            ]
        if isinstance(update, UserMessageEntered):
            return _whole_message(
                update.message_id, "user", _text_of(update.message.content, TextBlock)
            )
        if isinstance(update, TurnStarted):
            return [{"type": "STEP_STARTED", "stepName": f"turn-{update.turn}"}]
        if isinstance(update, TurnEnded):
            self._last_end = update
            ended = {"turn": update.turn, "reason": update.kind, "seq": update.seq}
            return [
                {"type": "STEP_FINISHED", "stepName": f"turn-{update.turn}"},
                _custom("dsh.turn-end", ended),
            ]
        if isinstance(update, MessageQueued | MessageDiscarded | MessageClaimed):
            change = {MessageQueued: "queued", MessageDiscarded: "discarded"}.get(
                type(update), "claimed"
            )
            return [_custom("dsh.inbox", {"change": change, "messageId": update.message_id})]
        if isinstance(update, StatusUpdate):
            return [_custom("dsh.status", {"status": update.status})]
        if isinstance(update, RetryScheduled):
            return [_custom("dsh.retry", _retry(update))]
        if isinstance(update, ApprovalAsked):
            return [_custom("dsh.approval-asked", _approval(update))]
        return []  # AssistantStarted: the message opens with its first text

    def finish(self) -> list[AgUiEvent]:
        """``RUN_ERROR`` when the last turn failed, else ``RUN_FINISHED``."""
        reason = None if self._last_end is None else self._last_end.reason
        if isinstance(reason, ErrorReason):
            return [
                {"type": "RUN_ERROR", "message": reason.error.message, "code": reason.error.code}
            ]
        finished: AgUiEvent = {
            "type": "RUN_FINISHED",
            "threadId": self._thread_id,
            "runId": self._run_id,
        }
        if isinstance(reason, AbortedReason):
            finished["outcome"] = {"type": "cancelled"}
        return [finished]

    # --- assistant messages -------------------------------------------------------------

    def _text_delta(self, message_id: MessageId, text: str) -> list[AgUiEvent]:
        events: list[AgUiEvent] = []
        if message_id not in self._text:
            self._text[message_id] = ""
            events.append(
                {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"}
            )
        if text:
            self._text[message_id] += text
            events.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": text})
        return events

    def _reasoning_delta(self, message_id: MessageId, text: str) -> list[AgUiEvent]:
        events: list[AgUiEvent] = []
        rid = reasoning_message_id(message_id)
        if self._open_reasoning != message_id:
            events += self._close_reasoning()
            self._open_reasoning = message_id
            self._reasoning.setdefault(message_id, "")
            events.append({"type": "REASONING_START", "messageId": rid})
            events.append(
                {"type": "REASONING_MESSAGE_START", "messageId": rid, "role": "reasoning"}
            )
        if text:
            self._reasoning[message_id] += text
            events.append({"type": "REASONING_MESSAGE_CONTENT", "messageId": rid, "delta": text})
        return events

    def _close_reasoning(self) -> list[AgUiEvent]:
        message_id, self._open_reasoning = self._open_reasoning, None
        if message_id is None:
            return []
        rid = reasoning_message_id(message_id)
        return [
            {"type": "REASONING_MESSAGE_END", "messageId": rid},
            {"type": "REASONING_END", "messageId": rid},
        ]

    def _close(self, message_id: MessageId) -> list[AgUiEvent]:
        events = self._close_reasoning()
        if self._text.pop(message_id, None) is not None:
            events.append({"type": "TEXT_MESSAGE_END", "messageId": message_id})
        self._reasoning.pop(message_id, None)
        return events

    def _commit(self, update: AssistantCommitted) -> list[AgUiEvent]:
        """Send what the deltas did not (a provider that sends whole blocks), then close
        the message. The committed text extends the streamed text: the block-end of a
        block is the deltas' sum."""
        message_id, content = update.message_id, update.message.content
        events: list[AgUiEvent] = []
        reasoning = _text_of(content, ReasoningBlock)
        streamed = self._reasoning.get(message_id, "")
        if reasoning.startswith(streamed) and len(reasoning) > len(streamed):
            events += self._reasoning_delta(message_id, reasoning[len(streamed) :])
        text = _text_of(content, TextBlock)
        streamed = self._text.get(message_id, "")
        if text.startswith(streamed) and len(text) > len(streamed):
            events += self._close_reasoning() + self._text_delta(message_id, text[len(streamed) :])
        return events + self._close(message_id)

    def _tool_call(self, update: ToolCallCommitted) -> list[AgUiEvent]:
        start: AgUiEvent = {
            "type": "TOOL_CALL_START",
            "toolCallId": update.call_id,
            "toolCallName": update.name,
            "parentMessageId": update.message_id,
        }
        args = [{"type": "TOOL_CALL_ARGS", "toolCallId": update.call_id, "delta": update.arguments}]
        end = {"type": "TOOL_CALL_END", "toolCallId": update.call_id}
        return [start, *(args if update.arguments else []), end]


def _whole_message(message_id: MessageId, role: str, text: str) -> list[AgUiEvent]:
    events: list[AgUiEvent] = [
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": role}
    ]
    if text:
        events.append({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": text})
    events.append({"type": "TEXT_MESSAGE_END", "messageId": message_id})
    return events


def _retry(update: RetryScheduled) -> dict[str, Any]:
    """The wait before the next attempt, and the failure it follows (as ``dsh chat``
    shows it: "retry 1 of 5 in 482 ms")."""
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


def _approval(update: ApprovalAsked) -> dict[str, Any]:
    """The call waiting for a decision; its ``TOOL_CALL_*`` events come when it runs."""
    return {
        "messageId": update.message_id,
        "toolCallId": update.call_id,
        "toolCallName": update.tool_name,
        "arguments": update.arguments,
        "reason": update.reason,
        "requestId": update.request_id,
        "seq": update.seq,
    }


def _custom(name: str, value: dict[str, Any]) -> AgUiEvent:
    return {"type": "CUSTOM", "name": name, "value": value}


def ag_ui_events(
    updates: Iterable[AgentUpdate], *, thread_id: str, run_id: str
) -> Iterator[AgUiEvent]:
    """Every AG-UI event of a run whose updates are ``updates``, start to finish."""
    encoder = AgUiEncoder(thread_id=thread_id, run_id=run_id)
    yield from encoder.start()
    for update in updates:
        yield from encoder.encode(update)
    yield from encoder.finish()


async def ag_ui_sse(
    updates: AsyncIterable[AgentUpdate], *, thread_id: str, run_id: str
) -> AsyncIterator[str]:
    """The SSE lines of a live run: write each to the response as it comes. An update
    stream that raises ends the lines with ``RUN_ERROR`` naming the error."""
    encoder = AgUiEncoder(thread_id=thread_id, run_id=run_id)
    for event in encoder.start():
        yield sse_line(event)
    try:
        async for update in updates:
            for event in encoder.encode(update):
                yield sse_line(event)
    except Exception as error:
        message = describe_exception(error, with_type=False)
        failed = {"type": "RUN_ERROR", "message": message, "code": type(error).__name__}
        yield sse_line(failed)
        return
    for event in encoder.finish():
        yield sse_line(event)


__all__ = [
    "SSE_MEDIA_TYPE",
    "AgUiEncoder",
    "AgUiEvent",
    "ag_ui_events",
    "ag_ui_sse",
    "reasoning_message_id",
    "sse_line",
]
