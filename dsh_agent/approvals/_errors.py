"""Errors and signals of durable approvals."""

from __future__ import annotations

from dsh_agent.errors import AgentError
from dsh_llm import CallId


class ApprovalError(AgentError):
    """``approve`` / ``deny`` named a call that is not waiting for a decision (unknown,
    or already decided); nothing was written. ``call_id`` names it."""

    def __init__(self, message: str, *, call_id: CallId) -> None:
        super().__init__(message)
        self.call_id = call_id


class ApprovalsPending(Exception):
    """Raised out of a step whose next call waits for a person's decision: the step
    and its turn stay open, and the agent goes idle until the call is decided."""
