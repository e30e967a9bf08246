"""Turns the log, event by event, into GenAI spans.

Spans are built from the session's committed events rather than from hooks inside the
loop: the log is already the single account of what happened, each span can name the
exact seqs it covers, and the loop pays nothing when tracing is off. Times are taken
when each event is observed, which is when it was appended.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from pydantic_core import to_json

from dsh_agent.tracing import _attributes as attr
from dsh_llm._ids import CallId
from dsh_llm._stream import AbortedFinish, ErrorFinish, FinishChunk, TokenUsage, UsageChunk
from dsh_session._session import Session
from dsh_session.events import (
    AssistantChunkEvent,
    AssistantMessageEvent,
    ErrorReason,
    LlmRetryEvent,
    LlmRetryStartedEvent,
    Replace,
    SessionEvent,
    StepEndEvent,
    StepStartEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)
from dsh_session.tool_failure_codes import TOOL_ERROR


@dataclass
class _Attempt:
    """One model request: a step's first attempt, or one started by a retry."""

    span: Span
    turn: int
    step: int
    sent: bool = False
    """Whether the request attributes were filled in (at the attempt's first chunk)."""
    finish_reasons: list[str] = field(default_factory=list)
    usage: TokenUsage | None = None


@dataclass
class _Turn:
    span: Span
    context: Context
    inputs: list[str] = field(default_factory=list)


class SpanRecorder:
    """Observes one session's events and opens and closes the spans they imply."""

    def __init__(
        self, session: Session, tracer: trace.Tracer, *, agent_name: str, include_content: bool
    ) -> None:
        self._session = session
        self._tracer = tracer
        self._agent_name = agent_name
        self._include_content = include_content
        self._turn: _Turn | None = None
        self._attempt: _Attempt | None = None
        self._tools: dict[CallId, Span] = {}

    def observe(self, event: SessionEvent) -> None:
        """Advance the spans by one committed event."""
        now = time.time_ns()
        if isinstance(event, TurnStartEvent):
            self._start_turn(event, now)
            return
        if self._turn is None:
            return  # attached in the middle of a turn: wait for the next one
        if isinstance(event, AssistantChunkEvent):
            self._on_chunk(event)
        elif isinstance(event, UserMessageEvent) and not isinstance(event.surface_op, Replace):
            self._turn.inputs.append(event.data.id)  # a compaction checkpoint is no input
        elif isinstance(event, StepStartEvent | LlmRetryStartedEvent):
            self._start_attempt(event.data.turn, event.data.step, event.seq, now)
        elif isinstance(event, AssistantMessageEvent) and not isinstance(event.surface_op, Replace):
            self._on_answer(event, now)  # a replace (a regenerate's tombstone) is no answer
        elif isinstance(event, LlmRetryEvent | StepEndEvent):
            self._end_attempt(event.seq, now)
        elif isinstance(event, ToolCallEvent):
            self._start_tool(event, now)
        elif isinstance(event, ToolResultEvent):
            self._end_tool(event, now)
        elif isinstance(event, TurnEndEvent):
            self._end_turn(event, now)

    def close(self) -> None:
        """End whatever is still open (the agent is being detached)."""
        now = time.time_ns()
        for span in self._tools.values():
            span.end(end_time=now)
        self._tools.clear()
        if self._attempt is not None:
            self._attempt.span.end(end_time=now)
            self._attempt = None
        if self._turn is not None:
            self._turn.span.end(end_time=now)
            self._turn = None

    # --- turns -------------------------------------------------------------------------

    def _start_turn(self, event: TurnStartEvent, now: int) -> None:
        self.close()  # a turn never nests: anything open belongs to a turn that vanished
        span = self._tracer.start_span(
            f"invoke_agent {self._agent_name}",
            kind=SpanKind.INTERNAL,
            start_time=now,
            attributes={
                attr.OPERATION: "invoke_agent",
                attr.AGENT_NAME: self._agent_name,
                attr.CONVERSATION_ID: self._session.id,
                attr.SESSION_ID: self._session.id,
                attr.TURN: event.data.turn,
                attr.START_SEQ: event.seq,
            },
        )
        self._turn = _Turn(span=span, context=trace.set_span_in_context(span))

    def _end_turn(self, event: TurnEndEvent, now: int) -> None:
        assert self._turn is not None
        turn, self._turn = self._turn, None
        reason = event.data.reason
        turn.span.set_attribute(attr.TURN_END_REASON, reason.kind)
        turn.span.set_attribute(attr.TURN_INPUT_MESSAGE_IDS, turn.inputs)
        turn.span.set_attribute(attr.END_SEQ, event.seq)
        if isinstance(reason, ErrorReason):
            _fail(turn.span, reason.error.code, reason.error.message)
        self._end_attempt(event.seq, now)
        for span in self._tools.values():
            span.end(end_time=now)
        self._tools.clear()
        turn.span.end(end_time=now)

    # --- model attempts ------------------------------------------------------------------

    def _start_attempt(self, turn: int, step: int, seq: int, now: int) -> None:
        assert self._turn is not None
        self._end_attempt(seq, now)
        span = self._tracer.start_span(
            "chat",
            context=self._turn.context,
            kind=SpanKind.CLIENT,
            start_time=now,
            attributes={
                attr.OPERATION: "chat",
                attr.CONVERSATION_ID: self._session.id,
                attr.SESSION_ID: self._session.id,
                attr.TURN: turn,
                attr.STEP: step,
                attr.START_SEQ: seq,
            },
        )
        self._attempt = _Attempt(span=span, turn=turn, step=step)

    def _on_chunk(self, event: AssistantChunkEvent) -> None:
        attempt = self._attempt
        if attempt is None:
            return
        if not attempt.sent:
            attempt.sent = True
            self._describe_request(attempt.span)
        chunk = event.data.chunk
        if isinstance(chunk, UsageChunk):
            attempt.usage = chunk.usage
        elif isinstance(chunk, FinishChunk):
            attempt.finish_reasons.append(chunk.reason.kind)
            if isinstance(chunk.reason, ErrorFinish | AbortedFinish):
                failure = chunk.reason.failure
                _fail(attempt.span, failure.code, failure.message)

    def _describe_request(self, span: Span) -> None:
        """What the request carried: at the first chunk the request has been built from
        exactly the header and history logged so far."""
        header = self._session.request_header
        messages = self._session.derive_messages()
        span.set_attribute(attr.INPUT_MESSAGE_IDS, [message.id for message in messages])
        if header is None:
            return
        config = header.config
        span.update_name(f"chat {config.model}")
        span.set_attribute(attr.PROVIDER, config.provider)
        span.set_attribute(attr.REQUEST_MODEL, config.model)
        if config.max_tokens is not None:
            span.set_attribute(attr.REQUEST_MAX_TOKENS, config.max_tokens)
        if self._include_content:
            span.set_attribute(attr.INPUT_MESSAGES, _json(list(messages)))
            if header.system is not None:
                span.set_attribute(attr.SYSTEM_INSTRUCTIONS, header.system)

    def _on_answer(self, event: AssistantMessageEvent, now: int) -> None:
        attempt = self._attempt
        if attempt is None:
            return
        data = event.data
        span = attempt.span
        span.set_attribute(attr.OUTPUT_MESSAGE_ID, data.message.id)
        span.set_attribute(attr.RESPONSE_MODEL, data.message.source.model)
        if data.interrupted:
            span.set_attribute(attr.INTERRUPTED, True)
        if data.usage is not None:
            attempt.usage = data.usage
        if self._include_content:
            span.set_attribute(attr.OUTPUT_MESSAGES, _json([data.message]))
        self._end_attempt(event.seq, now)

    def _end_attempt(self, seq: int, now: int) -> None:
        attempt, self._attempt = self._attempt, None
        if attempt is None:
            return
        span = attempt.span
        span.set_attribute(attr.END_SEQ, seq)
        if attempt.finish_reasons:
            span.set_attribute(attr.FINISH_REASONS, attempt.finish_reasons)
        if attempt.usage is not None:
            span.set_attribute(attr.INPUT_TOKENS, attempt.usage.input_tokens)
            span.set_attribute(attr.OUTPUT_TOKENS, attempt.usage.output_tokens)
            if attempt.usage.cache_read_tokens is not None:
                span.set_attribute(attr.CACHE_READ_TOKENS, attempt.usage.cache_read_tokens)
        span.end(end_time=now)

    # --- tools ---------------------------------------------------------------------------

    def _start_tool(self, event: ToolCallEvent, now: int) -> None:
        assert self._turn is not None
        data = event.data
        span = self._tracer.start_span(
            f"execute_tool {data.name}",
            context=self._turn.context,
            kind=SpanKind.INTERNAL,
            start_time=now,
            attributes={
                attr.OPERATION: "execute_tool",
                attr.TOOL_NAME: data.name,
                attr.TOOL_CALL_ID: data.call_id,
                attr.TOOL_TYPE: "function",
                attr.SESSION_ID: self._session.id,
                attr.TURN: data.turn,
                attr.STEP: data.step,
                attr.START_SEQ: event.seq,
            },
        )
        if self._include_content:
            span.set_attribute(attr.TOOL_ARGUMENTS, data.arguments)
        self._tools[data.call_id] = span

    def _end_tool(self, event: ToolResultEvent, now: int) -> None:
        data = event.data
        span = self._tools.pop(data.message.source.call_id, None)
        if span is None:
            return
        span.set_attribute(attr.RESULT_MESSAGE_ID, data.message.id)
        span.set_attribute(attr.END_SEQ, event.seq)
        if data.error is not None:
            _fail(span, data.error.code or data.error.name, data.error.name)
        elif data.message.content[0].is_error:
            _fail(span, TOOL_ERROR, "the tool returned an error result")
        if self._include_content:
            span.set_attribute(attr.TOOL_RESULT, _json(list(data.message.content[0].content)))
        span.end(end_time=now)


def _fail(span: Span, error_type: str, description: str) -> None:
    span.set_attribute(attr.ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, description))


def _json(values: list[object]) -> str:
    return to_json(values, by_alias=True).decode()


__all__ = [
    "SpanRecorder",
]
