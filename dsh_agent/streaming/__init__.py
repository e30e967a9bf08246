"""Streaming for UIs and sync code: the typed updates of a run (``agent.stream``,
``run_stream``), the AG-UI adapter, and ``run_sync`` / ``SyncAgent``."""

from dsh_agent.streaming._stream import DEFAULT_MAX_PENDING, UpdateStream, run_stream
from dsh_agent.streaming._sync import AgentFactory, SyncAgent, run_sync
from dsh_agent.streaming._updates import (
    AgentUpdate,
    AssistantCommitted,
    AssistantFailed,
    AssistantStarted,
    MessageClaimed,
    MessageDiscarded,
    MessageQueued,
    ReasoningDelta,
    StatusUpdate,
    TextDelta,
    ToolCallCommitted,
    ToolResultCommitted,
    TurnEnded,
    TurnStarted,
    UserMessageEntered,
)

__all__ = [
    "DEFAULT_MAX_PENDING",
    "AgentFactory",
    "AgentUpdate",
    "AssistantCommitted",
    "AssistantFailed",
    "AssistantStarted",
    "MessageClaimed",
    "MessageDiscarded",
    "MessageQueued",
    "ReasoningDelta",
    "StatusUpdate",
    "SyncAgent",
    "TextDelta",
    "ToolCallCommitted",
    "ToolResultCommitted",
    "TurnEnded",
    "TurnStarted",
    "UpdateStream",
    "UserMessageEntered",
    "run_stream",
    "run_sync",
]
