"""dsh_agent — delivery, the durable inbox and the agent loop over a dsh_session log:
``AgentLoop``, pre-step handlers, tools, cancellation, ``run()`` and the request
reconstruction check."""

from dsh_agent._agent import (
    Agent,
    CallNext,
    Enter,
    PreStep,
    PreStepDecision,
    PreStepHandler,
    Reject,
)
from dsh_agent._cancellation import CancelCauseInput
from dsh_agent._config import AgentConfig
from dsh_agent._engine.loop import AgentLoop
from dsh_agent._engine.run import run, run_retry
from dsh_agent._live_updates import (
    AgentStatus,
    AssistantStarted,
    InboxTarget,
    LiveUpdate,
    LiveUpdateObserver,
    MessageClaimed,
    MessageDiscarded,
    MessageQueued,
    StatusUpdate,
)
from dsh_agent._model_settings import ModelSettings
from dsh_agent._recall import recall_tool
from dsh_agent._run_options import OutputRunOptions, RunOptions, RunPrompt
from dsh_agent._run_result import RunResult
from dsh_agent.approvals import ApprovalPolicy, PendingApproval
from dsh_agent.compaction import (
    Compaction,
    CompactionResult,
    ModelSummarizer,
    SummarizationInput,
    Summary,
    TokenMeter,
)
from dsh_agent.errors import (
    AgentClosedError,
    AgentError,
    ApprovalError,
    BranchError,
    CompactionError,
    InboxError,
    McpConnectionLost,
    McpConnectTimeoutError,
    MessageNotFoundError,
    NothingToRetryError,
    OutputValidationError,
    ReplayError,
    RequestReconstructionError,
    SessionInUseError,
    StreamOverflowError,
    SummaryError,
    ToolArgumentsError,
    TurnFailed,
)
from dsh_agent.requests import reconstruct_requests
from dsh_agent.retry import RetryPolicy
from dsh_agent.streaming._stream import UpdateStream, run_stream
from dsh_agent.streaming._sync import SyncAgent, run_sync
from dsh_agent.streaming._updates import (
    AgentUpdate,
    AssistantCommitted,
    AssistantFailed,
    ReasoningDelta,
    TextDelta,
    ToolCallCommitted,
    ToolResultCommitted,
    TurnEnded,
    TurnStarted,
    UserMessageEntered,
)
from dsh_agent.tools import (
    Tool,
    ToolContext,
    ToolOutput,
    ToolReturn,
    tool,
)

__all__ = [
    "Agent",
    "AgentClosedError",
    "AgentConfig",
    "AgentError",
    "AgentLoop",
    "AgentStatus",
    "AgentUpdate",
    "ApprovalError",
    "ApprovalPolicy",
    "AssistantCommitted",
    "AssistantFailed",
    "AssistantStarted",
    "BranchError",
    "CallNext",
    "CancelCauseInput",
    "Compaction",
    "CompactionError",
    "CompactionResult",
    "Enter",
    "InboxError",
    "InboxTarget",
    "LiveUpdate",
    "LiveUpdateObserver",
    "McpConnectTimeoutError",
    "McpConnectionLost",
    "MessageClaimed",
    "MessageDiscarded",
    "MessageNotFoundError",
    "MessageQueued",
    "ModelSettings",
    "ModelSummarizer",
    "NothingToRetryError",
    "OutputRunOptions",
    "OutputValidationError",
    "PendingApproval",
    "PreStep",
    "PreStepDecision",
    "PreStepHandler",
    "ReasoningDelta",
    "Reject",
    "ReplayError",
    "RequestReconstructionError",
    "RetryPolicy",
    "RunOptions",
    "RunPrompt",
    "RunResult",
    "SessionInUseError",
    "StatusUpdate",
    "StreamOverflowError",
    "SummarizationInput",
    "Summary",
    "SummaryError",
    "SyncAgent",
    "TextDelta",
    "TokenMeter",
    "Tool",
    "ToolArgumentsError",
    "ToolCallCommitted",
    "ToolContext",
    "ToolOutput",
    "ToolResultCommitted",
    "ToolReturn",
    "TurnEnded",
    "TurnFailed",
    "TurnStarted",
    "UpdateStream",
    "UserMessageEntered",
    "recall_tool",
    "reconstruct_requests",
    "run",
    "run_retry",
    "run_stream",
    "run_sync",
    "tool",
]
