"""The approval gate of an agent's tool phase, and the decisions that open it.

Before a step's calls run, the gate asks (``approval/asked``) about every call that
needs approval and was not asked about yet, all at once, so a person sees them
together. The calls then run in model order up to the first one still undecided; the
step waits there (:class:`_ApprovalsPending`) with its turn open. A decision is
``approval/decided``: ``allowed-once`` lets the call run when the tool phase goes on;
a denial commits the call's error result at once, with the person's reason, so the
reason is as durable as the decision. The result follows a ``tool/call`` of its own, as
in the harness (whose tools ask from inside their call): its session invariant refuses a
``tool/result`` with no ``tool/call`` before it in the step. Everything is read back
from the log, so a new agent over a reloaded session goes on exactly where the old one
stopped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

from dsh_agent.approvals._open_step import OpenStep, open_step
from dsh_agent.approvals._policy import ApprovalPolicy, approval_needed
from dsh_agent.errors import ApprovalError
from dsh_agent.tools import Tool
from dsh_llm import CallId
from dsh_llm._content import ToolCallBlock
from dsh_llm._create import create_tool_result_message
from dsh_llm._ids import new_uuid7
from dsh_session._approvals import ApprovalRecord, approvals_since
from dsh_session._events_harness import ApprovalAskedData, ApprovalDecidedData
from dsh_session._session import Session
from dsh_session.events import (
    ApprovalAskedEvent,
    ApprovalDecidedEvent,
    ToolCallData,
    ToolErrorInfo,
    ToolResultData,
)
from dsh_session.tool_failure_codes import TOOL_APPROVAL_DENIED

Outcome = Literal["allowed-once", "rejected", "cancelled"]


class _ApprovalsPending(Exception):
    """Raised out of a step whose next call waits for a person's decision: the step
    and its turn stay open, and the agent goes idle until the call is decided. A
    signal between the step and the turn runner, never raised to a caller."""


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """A tool call waiting for a person's decision."""

    call_id: CallId
    tool_name: str
    arguments: str
    """The raw JSON arguments, as the model wrote them."""
    reason: str | None
    """Why the policy asked, when it said."""
    request_id: str
    """The ``id`` of its ``approval/asked`` event."""
    turn: int
    step: int
    asked_seq: int


class ApprovalGate:
    """Asks, admits and decides the approvals of one agent's session."""

    def __init__(
        self, session: Session, tools: Mapping[str, Tool], policy: ApprovalPolicy | None
    ) -> None:
        self._session = session
        self.tools = tools
        """The tools whose ``requires_approval`` is consulted (swapped with the step's)."""
        self._policy = policy
        self._verdicts: dict[CallId, tuple[bool, str | None]] = {}
        """The policy's answer per call id: asked once per call in this process."""

    @property
    def pending(self) -> tuple[PendingApproval, ...]:
        """The calls of the open step waiting for a decision, in model order."""
        current, records = self._state()
        if current is None:
            return ()
        waiting: list[PendingApproval] = []
        for call in current.unanswered:
            record = records.get(call.call_id)
            if record is not None and record.decided is None:
                asked = record.asked
                waiting.append(
                    PendingApproval(
                        call_id=call.call_id,
                        tool_name=call.name,
                        arguments=call.arguments,
                        reason=asked.data.reason,
                        request_id=asked.data.id,
                        turn=current.turn,
                        step=current.step,
                        asked_seq=asked.seq,
                    )
                )
        return tuple(waiting)

    @property
    def blocked(self) -> bool:
        """Whether the open step cannot go on: its next unanswered call (model order)
        waits for a decision."""
        current, records = self._state()
        if current is None or not current.unanswered:
            return False
        record = records.get(current.unanswered[0].call_id)
        return record is not None and record.decided is None

    # --- the tool phase ------------------------------------------------------------------

    def admit(
        self, turn: int, step: int, calls: Sequence[ToolCallBlock], *, fresh: bool = False
    ) -> tuple[list[ToolCallBlock], bool]:
        """Ask about the calls that need it, then return the unanswered calls that may
        run now (model order, up to the first undecided one) and whether one waits.
        ``fresh``: the calls of the message this process just committed, whose step
        has no result and no ask yet; when none needs approval the log is not read."""
        if fresh and not any(self._verdict(call)[0] for call in calls):
            return list(calls), False
        current, records = self._state()
        answered = frozenset() if current is None else current.answered
        unanswered = [call for call in calls if call.call_id not in answered]
        for call in unanswered:
            if call.call_id not in records:
                needed, reason = self._verdict(call)
                if needed:
                    records[call.call_id] = ApprovalRecord(
                        asked=self._ask(call, reason), decided=None
                    )
        runnable: list[ToolCallBlock] = []
        for call in unanswered:
            record = records.get(call.call_id)
            if record is None:
                runnable.append(call)
            elif record.decided is None:
                return runnable, True
            elif record.decided.data.outcome == "allowed-once":
                runnable.append(call)
            else:  # decided, but the result was lost with the process that decided
                self._commit_denial(turn, step, call, _denial(turn, step, call, None))
        return runnable, False

    def _verdict(self, call: ToolCallBlock) -> tuple[bool, str | None]:
        verdict = self._verdicts.get(call.call_id)
        if verdict is None:
            tool = self.tools.get(call.name)
            verdict = self._verdicts[call.call_id] = approval_needed(call, tool, self._policy)
        return verdict

    def withdraw(self, calls: Sequence[ToolCallBlock]) -> list[ToolCallBlock]:
        """The turn is ending (cancelled, or the loop failed): decide every open ask
        ``cancelled`` and return the calls still unanswered, for the loop to answer."""
        current, records = self._state()
        answered = frozenset() if current is None else current.answered
        unanswered = [call for call in calls if call.call_id not in answered]
        for call in unanswered:
            record = records.get(call.call_id)
            if record is not None and record.decided is None:
                self._decide(record.asked.data.id, "cancelled")
        return unanswered

    # --- decisions -------------------------------------------------------------------------

    def approve(self, call_id: CallId) -> None:
        """Record that ``call_id`` may run once."""
        self._decide(self._waiting(call_id).request_id, "allowed-once")

    def deny(self, call_id: CallId, reason: str | None) -> None:
        """Record the denial of ``call_id`` and commit its error result."""
        waiting = self._waiting(call_id)
        call = ToolCallBlock(call_id=call_id, name=waiting.tool_name, arguments=waiting.arguments)
        try:  # build the error result first: a reason that cannot be stored decides nothing
            denial = _denial(waiting.turn, waiting.step, call, reason)
        except ValidationError as error:
            problem = error.errors()[0]["msg"]
            raise ApprovalError(
                f"the reason for denying tool call {call_id!r} cannot be stored ({problem}); "
                "nothing was written, the call still waits",
                call_id=call_id,
            ) from error
        self._decide(waiting.request_id, "rejected")
        self._commit_denial(waiting.turn, waiting.step, call, denial)

    def _waiting(self, call_id: CallId) -> PendingApproval:
        for waiting in self.pending:
            if waiting.call_id == call_id:
                return waiting
        raise ApprovalError(self._not_pending(call_id), call_id=call_id)

    def _not_pending(self, call_id: CallId) -> str:
        asked: ApprovalAskedEvent | None = None
        decided: ApprovalDecidedEvent | None = None
        for event in self._session.events:
            if isinstance(event, ApprovalAskedEvent) and event.data.call_id == call_id:
                asked, decided = event, None
            elif (
                isinstance(event, ApprovalDecidedEvent)
                and asked is not None
                and event.data.id == asked.data.id
            ):
                decided = event
        if decided is not None:
            return (
                f"tool call {call_id!r} was already decided ({decided.data.outcome}, "
                f"event {decided.seq}); a decision is final"
            )
        waiting = ", ".join(repr(p.call_id) for p in self.pending) or "none"
        return (
            f"no tool call {call_id!r} is waiting for approval in session "
            f"{self._session.id!r} (waiting: {waiting})"
        )

    # --- writing ---------------------------------------------------------------------------

    def _state(self) -> tuple[OpenStep | None, dict[CallId, ApprovalRecord]]:
        """The open step and the approvals asked in it, read from the log."""
        current = open_step(self._session)
        if current is None:
            return None, {}
        return current, approvals_since(self._session.events, current.start)

    def _ask(self, call: ToolCallBlock, reason: str | None) -> ApprovalAskedEvent:
        data = ApprovalAskedData(
            id=new_uuid7(), tool_name=call.name, call_id=call.call_id, reason=reason
        )
        event = self._session.append("approval/asked", data)
        assert isinstance(event, ApprovalAskedEvent)
        return event

    def _decide(self, request_id: str, outcome: Outcome) -> None:
        self._session.append(
            "approval/decided", ApprovalDecidedData(id=request_id, outcome=outcome)
        )

    def _commit_denial(
        self, turn: int, step: int, call: ToolCallBlock, denial: ToolResultData
    ) -> None:
        """The denied call's ``tool/call`` (it never started: its result says so), then
        its error result, in one flush with the decision."""
        data = ToolCallData(
            turn=turn, step=step, call_id=call.call_id, name=call.name, arguments=call.arguments
        )
        self._session.append("tool/call", data)
        self._session.append("tool/result", denial)


def _denial(turn: int, step: int, call: ToolCallBlock, reason: str | None) -> ToolResultData:
    """The error result of a denied call; a reason that cannot be stored raises
    pydantic's ``ValidationError``."""
    because = f": {reason}" if reason else ""
    text = (
        f"Error: the user denied this call of tool {call.name!r}{because}. It did not "
        "run. Do not call it again unless the user asks you to."
    )
    message = create_tool_result_message(call_id=call.call_id, content=text, is_error=True)
    error = ToolErrorInfo(name="ToolApprovalDeniedError", code=TOOL_APPROVAL_DENIED)
    return ToolResultData(turn=turn, step=step, message=message, error=error)


__all__ = [
    "ApprovalGate",
    "Outcome",
    "PendingApproval",
]
