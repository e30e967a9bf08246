"""Tool calls waiting for approval in ``dsh chat``, in both chat modes.

``/approve CALL`` lets a waiting call run once; ``/deny CALL [REASON]`` refuses it (the
model gets an error result naming the reason). At a terminal the prompt also asks
about the first waiting call, and ``y`` / ``n [REASON]`` answers it. Pending calls are
listed when a session is resumed, so a decision can come from a later chat.
``--tools MODULE:NAME`` gives the chat its tools (:mod:`.chat_imports`).
"""

from __future__ import annotations

from collections.abc import Sequence

from dsh_agent import AgentLoop, PendingApproval
from dsh_llm import CallId

APPROVE = "/approve"
DENY = "/deny"
YES = frozenset({"y", "yes"})
NO = frozenset({"n", "no"})


def describe(pending: PendingApproval) -> str:
    """One line naming the call, its tool and its arguments."""
    why = f" ({pending.reason})" if pending.reason else ""
    return f"{pending.tool_name} {pending.arguments} [call {pending.call_id}]{why}"


def pending_note(pending: Sequence[PendingApproval]) -> str | None:
    """What to tell the user about the calls waiting for a decision, if any."""
    if not pending:
        return None
    listed = "; ".join(describe(waiting) for waiting in pending)
    return (
        f"{len(pending)} tool call(s) wait for approval: {listed}. "
        f"{APPROVE} CALL runs one, {DENY} CALL [REASON] refuses it"
    )


def ask_prompt(pending: Sequence[PendingApproval]) -> str | None:
    """The terminal's question about the first waiting call, if any."""
    return f"allow {describe(pending[0])}? [y/n] › " if pending else None


async def decide_line(agent: AgentLoop, line: str, *, answers: bool) -> str | None:
    """Carry out ``line`` if it decides a waiting call (``/approve``, ``/deny``, and
    with ``answers`` a ``y`` / ``n [REASON]`` about the first one); return the note to
    show, or None when the line is not a decision. A call that is not waiting
    raises :class:`~dsh_agent.ApprovalError`."""
    command, _, rest = line.strip().partition(" ")
    typed, _, reason = rest.strip().partition(" ")
    call_id = CallId(typed)
    pending = agent.pending_approvals
    if answers and pending and agent.status == "idle" and command.lower() in YES | NO:
        command = APPROVE if command.lower() in YES else DENY
        call_id, reason = pending[0].call_id, rest.strip()
    if command not in (APPROVE, DENY):
        return None
    if not call_id:
        return f"usage: {APPROVE} CALL or {DENY} CALL [REASON]"
    if command == APPROVE:
        await agent.approve(call_id)
        return f"approved call {call_id}"
    await agent.deny(call_id, reason.strip() or None)
    return f"denied call {call_id}"


__all__ = [
    "APPROVE",
    "DENY",
    "NO",
    "YES",
    "ask_prompt",
    "decide_line",
    "describe",
    "pending_note",
]
