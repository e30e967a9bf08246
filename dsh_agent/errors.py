"""Error types of dsh_agent, rooted at :class:`dsh_llm.DshError`.

Every public exception of dsh_agent is defined here::

    dsh_llm.DshError
        AgentError
            InboxError
            SessionInUseError
            AgentClosedError
            DeliveryError
                DeliveryRejectedError
            StreamOverflowError
            NothingToRetryError
            ToolArgumentsError
            TurnFailed
                UsageLimitExceeded
            OutputValidationError
            OutputPendingError
            ApprovalError
            DelegationDepthError
            BranchError
            RequestReconstructionError
            CompactionError
            MessageNotFoundError
            ReplayError
            McpConnectTimeoutError (also TimeoutError)
            McpConnectionLost
            DurableStepError
        dsh_llm.LlmError
            SummaryError

The signals the engine unwinds with (a turn cancelled, a step waiting for approvals)
are private to the modules that raise and catch them; no caller ever sees one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_llm._ids import CallId, MessageId
from dsh_llm.errors import DshError, LlmError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from dsh_agent._run_result import RunResult
    from dsh_llm._failure import LlmFailure

__all__ = [
    "AgentClosedError",
    "AgentError",
    "ApprovalError",
    "BranchError",
    "CompactionError",
    "DelegationDepthError",
    "DeliveryError",
    "DeliveryRejectedError",
    "DurableStepError",
    "InboxError",
    "McpConnectTimeoutError",
    "McpConnectionLost",
    "MessageNotFoundError",
    "NothingToRetryError",
    "OutputPendingError",
    "OutputValidationError",
    "ReplayError",
    "RequestReconstructionError",
    "SessionInUseError",
    "StreamOverflowError",
    "SummaryError",
    "ToolArgumentsError",
    "TurnFailed",
    "UsageLimitExceeded",
]


class AgentError(DshError):
    """Root of every error dsh_agent raises on purpose."""


class InboxError(AgentError):
    """An inbox change was refused (e.g. a message id already pending) or a stored
    ``agent/inbox/spliced`` event cannot be replayed. Nothing was written and the
    pending lists are unchanged. ``message_id`` / ``seq`` name what is at fault."""

    def __init__(
        self, message: str, *, message_id: MessageId | None = None, seq: int | None = None
    ) -> None:
        super().__init__(message)
        self.message_id = message_id
        self.seq = seq


class SessionInUseError(AgentError):
    """An agent loop was built over a :class:`~dsh_session.Session` object that another
    live loop still drives; nothing was written. ``session_id`` names the session.
    Close the other loop (``await loop.aclose()``, or leave its ``async with``) first."""

    def __init__(self, message: str, *, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


class AgentClosedError(AgentError):
    """A closed agent loop was asked to deliver, cancel or change its inbox; nothing
    was written. ``session_id`` names the session it drove."""

    def __init__(self, message: str, *, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


class DeliveryError(AgentError):
    """A delivery to session ``session_id`` through :func:`dsh_agent.connect` was refused
    before anything was written: the session is unknown or was deleted, its log is
    corrupt or of a newer format, or the message fails validation. The cause is chained."""

    def __init__(self, message: str, *, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


class DeliveryRejectedError(DeliveryError):
    """A delivery with ``policy="reject"`` arrived while session ``session_id`` runs a
    turn; nothing was written (the owner refuses it the same way, durably, when the
    turn started after the client looked)."""


class StreamOverflowError(AgentError):
    """An update stream's consumer fell more than ``limit`` updates behind, so the stream
    stopped observing rather than grow without bound or drop updates silently. The
    updates buffered before were all delivered; ``seq`` is the first session event the
    stream did not turn into an update: reload the session from its store and resume
    from there. The agent itself was not affected."""

    def __init__(self, message: str, *, session_id: str, seq: int, limit: int) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.seq = seq
        self.limit = limit


class NothingToRetryError(AgentError):
    """``agent.retry()`` was called but the last turn did not fail (it completed, was
    blocked or cancelled, or no turn has ended yet); nothing was written."""


class McpConnectTimeoutError(AgentError, TimeoutError):
    """An MCP server did not complete the handshake (``initialize``) and list its tools
    within the toolset's ``connect_timeout``; the attempt was abandoned and its server
    process (for stdio) stopped. ``timeout`` is that limit in seconds, ``server``
    names the command or URL."""

    def __init__(self, message: str, *, server: str, timeout: float) -> None:
        super().__init__(message)
        self.server = server
        self.timeout = timeout


class ToolArgumentsError(AgentError):
    """Raised by a handler (the ones :func:`tool` builds do it for you) when the
    arguments are unusable; the call ends ``TOOL_ARGUMENTS_INVALID`` with this text."""


class TurnFailed(AgentError):
    """The last turn of a run ended ``error``. ``failure`` says why (its code, e.g.
    ``TRANSPORT``, and the provider's or the exception's text); ``result`` is what the
    run observed, events included. ``str()`` is one line fit for a user."""

    def __init__(self, failure: LlmFailure, result: RunResult) -> None:
        super().__init__(_describe_failure(failure))
        self.failure = failure
        self.result = result


class DelegationDepthError(AgentError):
    """A sub-agent tool (:func:`~dsh_agent.agent_tool`) refused to delegate because
    the child would be deeper than ``max_depth`` (runaway recursion); no child session
    was created. ``depth`` is the depth the child would have had."""

    def __init__(self, message: str, *, depth: int, max_depth: int) -> None:
        super().__init__(message)
        self.depth = depth
        self.max_depth = max_depth


class UsageLimitExceeded(TurnFailed):
    """The last turn of a run ended because the agent's
    :class:`~dsh_agent.UsageLimits` refused its next request or tool calls (its
    failure code is ``USAGE_LIMIT_EXCEEDED``, logged in the turn's end reason; the
    message names the limit). ``result.usage()`` says what was spent."""


def _describe_failure(failure: LlmFailure) -> str:
    """One line naming the failure: ``the model call failed (SERVER): HTTP 503: ...``
    (the adapters' messages name the HTTP status when there was one)."""
    return f"the model call failed ({failure.code}): {failure.message}"


class OutputValidationError(AgentError):
    """The model gave no valid answer of the output type within the allowed attempts;
    ``problems`` holds what was wrong with each attempt, in order."""

    def __init__(self, output_type: type[BaseModel], problems: list[str]) -> None:
        attempts = len(problems)
        super().__init__(
            f"no valid {output_type.__name__} after {attempts} attempt"
            f"{'s' if attempts != 1 else ''}: {problems[-1] if problems else 'no answer'}"
        )
        self.output_type = output_type
        self.problems = tuple(problems)


class OutputPendingError(AgentError):
    """``RunResult.output`` was read while the run's turn waits for approval of a tool
    call and has no answer yet: decide the waiting calls (``approve`` / ``deny``), let
    the turn go on, and read it again. ``turn`` is the waiting turn, ``call_ids`` the
    calls it waits for."""

    def __init__(self, output_type: type[BaseModel], turn: int, call_ids: list[CallId]) -> None:
        calls = ", ".join(repr(call_id) for call_id in call_ids) or "(none left)"
        super().__init__(
            f"no {output_type.__name__} yet: turn {turn} waits for approval of call "
            f"{calls}; decide it (approve or deny), let the turn go on, then read the "
            "output again"
        )
        self.output_type = output_type
        self.turn = turn
        self.call_ids = tuple(call_ids)


class ApprovalError(AgentError):
    """``approve`` / ``deny`` named a call that is not waiting for a decision (unknown,
    or already decided), or ``deny`` gave a reason that cannot be stored; nothing was
    written. ``call_id`` names it."""

    def __init__(self, message: str, *, call_id: CallId) -> None:
        super().__init__(message)
        self.call_id = call_id


class BranchError(AgentError):
    """``regenerate()`` or ``edit()`` was refused; nothing was written. The message says
    why (nothing to regenerate, an id that names no prompt, the agent is busy)."""


class RequestReconstructionError(AgentError):
    """The log cannot explain a request: it does not start at seq 0 or has a gap, or a
    model attempt has no ``request/header`` before it. ``seq`` names the event."""

    def __init__(self, message: str, *, seq: int) -> None:
        super().__init__(message)
        self.seq = seq


class CompactionError(AgentError):
    """A compaction attempt failed and was closed with ``compaction/end {error}``; the
    surface is unchanged. ``compaction_id`` names the attempt in the log."""

    def __init__(self, message: str, *, compaction_id: str | None = None) -> None:
        super().__init__(message)
        self.compaction_id = compaction_id


class MessageNotFoundError(AgentError):
    """``recall`` was asked for a message id its session's log does not hold."""

    def __init__(self, *, session_id: str, message_id: str) -> None:
        super().__init__(f"session {session_id!r} holds no message {message_id!r}")
        self.session_id = session_id
        self.message_id = message_id


class ReplayError(AgentError):
    """A recorded session cannot be replayed as asked: it has no model request to
    replay, a recorded tool result is missing for a call the code makes, or the agent
    the factory built does not fit the recording. The message names what is wrong."""


class McpConnectionLost(AgentError):
    """The connection to the MCP server closed; for a call in flight its outcome on the
    server is unknown."""


class DurableStepError(AgentError):
    """A piece of work a durable-execution activity was asked to do does not fit the
    session's log (``dsh_agent.temporal``): the call is not one the open step
    requested, it still waits for a person, or the store is behind the seq the
    workflow already saw. Running the activity again cannot help."""

    def __init__(self, message: str, *, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


class SummaryError(LlmError):
    """The summarizer produced no usable summary."""
