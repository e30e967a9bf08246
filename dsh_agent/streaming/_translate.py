"""Session events into stream updates: what a committed event means to a UI.

The translator keeps the two facts a single event does not carry: the id of the model
stream being observed (announced live by ``AssistantStarted``, so chunks of another
writer's stream are not shown) and the last committed assistant message (the parent of
the tool calls and approvals that follow it).
"""

from __future__ import annotations

from collections.abc import Iterator

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
from dsh_llm import CallId
from dsh_llm._content import ToolCallBlock
from dsh_llm._ids import MessageId
from dsh_llm._messages import AssistantMessage
from dsh_llm._stream import (
    AbortedFinish,
    ErrorFinish,
    FinishChunk,
    ReasoningDeltaChunk,
    TextDeltaChunk,
)
from dsh_session._session import Session
from dsh_session.events import (
    ApprovalAskedEvent,
    AssistantChunkEvent,
    AssistantMessageEvent,
    LlmRetryEvent,
    Replace,
    SessionEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
    TurnStartEvent,
    UserMessageEvent,
)


class EventTranslator:
    """Translates the committed events of one session, in order."""

    __slots__ = ("_answered", "_session", "streaming")

    def __init__(self, session: Session) -> None:
        self._session = session
        self.streaming: MessageId | None = None
        """The model stream being observed (set from ``AssistantStarted``)."""
        self._answered: AssistantMessage | None = None

    def translate(self, event: SessionEvent) -> AgentUpdate | None:
        """The update ``event`` stands for, if any."""
        if isinstance(event, AssistantChunkEvent):  # most updates; never a replace
            return self._chunk_update(event)
        if isinstance(event.surface_op, Replace):
            return None  # compaction rewrites what was shown: no new message to stream
        if isinstance(event, TurnStartEvent):
            return TurnStarted(event.data.turn, event.seq)
        session = self._session
        if isinstance(event, UserMessageEvent):
            turn, step = session.open_turn or 0, session.open_step or 0
            return UserMessageEntered(event.data, turn, step, event.seq)
        if isinstance(event, AssistantMessageEvent):
            data = event.data
            self._answered = data.message
            return AssistantCommitted(
                data.message, data.turn, data.step, event.seq, bool(data.interrupted)
            )
        if isinstance(event, ToolCallEvent):
            call = event.data
            parent = self._calling(call.call_id, event.seq)[0].id
            return ToolCallCommitted(
                parent, call.call_id, call.name, call.arguments, call.turn, call.step, event.seq
            )
        if isinstance(event, ApprovalAskedEvent):
            return self._approval_asked(event)
        if isinstance(event, LlmRetryEvent):
            retry = event.data
            return RetryScheduled(
                retry.turn,
                retry.step,
                retry.retry,
                retry.max_retries,
                retry.delay_ms,
                retry.failure,
                event.seq,
            )
        if isinstance(event, ToolResultEvent):
            result = event.data
            block = result.message.content[0]
            return ToolResultCommitted(
                result.message,
                block.call_id,
                block.is_error,
                result.turn,
                result.step,
                event.seq,
            )
        if isinstance(event, TurnEndEvent):
            return TurnEnded(event.data.turn, event.data.reason, event.seq)
        return None

    def _approval_asked(self, event: ApprovalAskedEvent) -> ApprovalAsked | None:
        asked, session = event.data, self._session
        if asked.call_id is None:  # a harness ask about something other than a call
            return None
        message, call = self._calling(asked.call_id, event.seq)
        return ApprovalAsked(
            message.id,
            call.call_id,
            call.name,
            call.arguments,
            asked.reason,
            asked.id,
            session.open_turn or 0,
            session.open_step or 0,
            event.seq,
        )

    def _calling(self, call_id: CallId, seq: int) -> tuple[AssistantMessage, ToolCallBlock]:
        """The assistant message that asked for ``call_id``, and the call: the one this
        stream saw committed, or (when it joined a running turn) one before ``seq``."""
        for message in (self._answered, *_assistant_messages(self._session, seq)):
            if message is None:
                continue
            for block in message.content:
                if isinstance(block, ToolCallBlock) and block.call_id == call_id:
                    return message, block
        raise LookupError(f"the call {call_id!r} at seq {seq} follows no assistant message")

    def _chunk_update(self, event: AssistantChunkEvent) -> AgentUpdate | None:
        chunk, message_id = event.data.chunk, self.streaming
        if message_id is None:  # another writer's chunks: no stream was announced
            return None
        if isinstance(chunk, TextDeltaChunk):
            return TextDelta(message_id, chunk.index, chunk.text, event.seq)
        if isinstance(chunk, ReasoningDeltaChunk):
            return ReasoningDelta(message_id, chunk.index, chunk.text, event.seq)
        if isinstance(chunk, FinishChunk) and isinstance(chunk.reason, ErrorFinish | AbortedFinish):
            return AssistantFailed(message_id, chunk.reason.failure, event.seq)
        return None


def _assistant_messages(session: Session, seq: int) -> Iterator[AssistantMessage]:
    """The assistant messages committed before ``seq``, the latest first."""
    events = session.events
    for earlier in range(seq - 1, -1, -1):
        event = events[earlier]
        if isinstance(event, AssistantMessageEvent):
            yield event.data.message


__all__ = [
    "EventTranslator",
]
