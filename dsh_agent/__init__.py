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
from dsh_agent._engine.branching import BranchError
from dsh_agent._engine.loop import AgentLoop
from dsh_agent._engine.run import run, run_retry
from dsh_agent._failures import TurnFailed
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
from dsh_agent._run_options import OutputRunOptions, RunOptions, RunPrompt
from dsh_agent._run_result import RunResult
from dsh_agent._structured_output import OutputValidationError
from dsh_agent.approvals import ApprovalError, ApprovalPolicy, PendingApproval
from dsh_agent.compaction import (
    Compaction,
    CompactionError,
    CompactionResult,
    ModelSummarizer,
    SummarizationInput,
    Summary,
    TokenMeter,
)
from dsh_agent.errors import (
    AgentClosedError,
    AgentError,
    InboxError,
    NothingToRetryError,
    SessionInUseError,
    StreamOverflowError,
)
from dsh_agent.inbox import Inbox
from dsh_agent.requests import (
    ModelAttempt,
    RequestMismatch,
    RequestReconstructionError,
    build_request,
    diff_requests,
    reconstruct_attempts,
    reconstruct_request,
    reconstruct_requests,
)
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
    ToolArgumentsError,
    ToolCallOutcome,
    ToolContext,
    ToolHandler,
    ToolOutput,
    ToolReturn,
    execute_tool_call,
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
    "Inbox",
    "InboxError",
    "InboxTarget",
    "LiveUpdate",
    "LiveUpdateObserver",
    "MessageClaimed",
    "MessageDiscarded",
    "MessageQueued",
    "ModelAttempt",
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
    "RequestMismatch",
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
    "SyncAgent",
    "TextDelta",
    "TokenMeter",
    "Tool",
    "ToolArgumentsError",
    "ToolCallCommitted",
    "ToolCallOutcome",
    "ToolContext",
    "ToolHandler",
    "ToolOutput",
    "ToolResultCommitted",
    "ToolReturn",
    "TurnEnded",
    "TurnFailed",
    "TurnStarted",
    "UpdateStream",
    "UserMessageEntered",
    "build_request",
    "diff_requests",
    "execute_tool_call",
    "reconstruct_attempts",
    "reconstruct_request",
    "reconstruct_requests",
    "run",
    "run_retry",
    "run_stream",
    "run_sync",
    "tool",
]
