"""Streaming for UIs and sync code: the typed updates of a run (``agent.stream``,
``run_stream``), the AG-UI adapter, the Vercel AI SDK UI message stream encoder, and
``run_sync`` / ``SyncAgent``."""

from dsh_agent._live_updates import (
    AssistantStarted,
    MessageClaimed,
    MessageDiscarded,
    MessageQueued,
    StatusUpdate,
)
from dsh_agent.streaming._ag_ui import (
    SSE_MEDIA_TYPE,
    AgUiEncoder,
    AgUiEvent,
    ag_ui_events,
    ag_ui_sse,
    reasoning_message_id,
)
from dsh_agent.streaming._stream import DEFAULT_MAX_PENDING, UpdateStream, run_stream
from dsh_agent.streaming._sync import AgentFactory, SyncAgent, run_sync
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
from dsh_agent.streaming._vercel_ui import (
    VERCEL_UI_STREAM_HEADERS,
    VercelUiEncoder,
    VercelUiPart,
)

__all__ = [
    "DEFAULT_MAX_PENDING",
    "SSE_MEDIA_TYPE",
    "VERCEL_UI_STREAM_HEADERS",
    "AgUiEncoder",
    "AgUiEvent",
    "AgentFactory",
    "AgentUpdate",
    "ApprovalAsked",
    "AssistantCommitted",
    "AssistantFailed",
    "AssistantStarted",
    "MessageClaimed",
    "MessageDiscarded",
    "MessageQueued",
    "ReasoningDelta",
    "RetryScheduled",
    "StatusUpdate",
    "SyncAgent",
    "TextDelta",
    "ToolCallCommitted",
    "ToolResultCommitted",
    "TurnEnded",
    "TurnStarted",
    "UpdateStream",
    "UserMessageEntered",
    "VercelUiEncoder",
    "VercelUiPart",
    "ag_ui_events",
    "ag_ui_sse",
    "reasoning_message_id",
    "run_stream",
    "run_sync",
]
