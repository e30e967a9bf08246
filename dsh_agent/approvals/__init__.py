"""Durable approvals: tool calls that run only once a person approved them.

A tool declared ``@tool(requires_approval=True)``, or a call an agent's
:data:`ApprovalPolicy` asks about, is logged as ``approval/asked`` and not run; the
agent goes idle with the turn open (the harness keeps approvals inside an open turn
too). ``agent.approve(call_id)`` / ``agent.deny(call_id, reason)`` log
``approval/decided`` and the turn goes on from where it stopped, in this process or
in a new one over the reloaded session. See docs/decisions/2026-12-03-durable-approvals.md.
"""

from dsh_agent.approvals._gate import ApprovalGate, PendingApproval
from dsh_agent.approvals._policy import ApprovalPolicy, approval_needed
from dsh_agent.errors import ApprovalError

__all__ = [
    "ApprovalError",
    "ApprovalGate",
    "ApprovalPolicy",
    "PendingApproval",
    "approval_needed",
]
