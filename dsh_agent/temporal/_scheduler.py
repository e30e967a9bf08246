"""The workflow side of a durable agent: schedule its activities, follow the seq.

Workflow code holds only the session id and the seq the log ends at; every activity
loads the session from the store, does its piece and reports positions in the log
(:mod:`._payloads`). The workflow's history therefore grows by a bounded amount per
step, however long the conversation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

from dsh_llm import CallId

with workflow.unsafe.imports_passed_through():
    from dsh_agent.temporal._payloads import (
        AbortInput,
        DecisionInput,
        DeliverInput,
        Lane,
        ModelStepInput,
        SessionInput,
        StepReport,
        ToolStepInput,
        TurnOutcome,
    )


@dataclass(frozen=True, slots=True)
class Decision:
    """A person's answer about a call waiting for approval."""

    approved: bool
    reason: str | None = None
    """Why it was denied (the model sees it)."""


Decide = Callable[[CallId], Awaitable[Decision]]
"""Workflow code that waits for a person's decision on the call it is given."""


@dataclass
class TurnControl:
    """What workflow code tells a running turn between its activities (its signal
    handlers fill it): messages for the turn's next step, and a cancel. The turn
    reads it before each activity; a turn that has ended leaves ``steers`` for the
    next turn and clears ``cancelled``."""

    steers: list[SessionInput] = field(default_factory=list)
    """Delivered, oldest first, to the next step (of the next turn when none runs)."""
    cancelled: bool = False
    """Set to abort the running turn: no piece of it is scheduled any more and the
    turn is closed ``aborted``; the activity in flight finishes first."""


@dataclass(frozen=True, slots=True)
class AgentRef:
    """What workflow code needs of a :class:`TemporalAgent`: the activities' names,
    where the log is and how activities are scheduled. It crosses Temporal as the
    input of :class:`SessionWorkflow`."""

    name: str
    store_url: str
    start_to_close_seconds: float = 600.0
    heartbeat_seconds: float = 10.0
    retry_initial_seconds: float = 1.0
    retry_maximum_seconds: float = 30.0


def session_workflow_id(session_id: str) -> str:
    """The workflow id of a session's ready workflow."""
    return f"dsh-session-{session_id}"


class StepScheduler:
    """The workflow side of an agent: schedules its activities and follows the seq."""

    def __init__(self, ref: AgentRef) -> None:
        self._ref = ref

    async def run(
        self,
        session_id: str,
        message: str,
        decide: Decide | None,
        control: TurnControl | None = None,
    ) -> TurnOutcome:
        message_id = str(workflow.uuid4())
        report = await self.deliver(session_id, message_id, message)
        return await self.run_turn(session_id, report.end_seq, (message_id,), decide, control)

    async def deliver(
        self, session_id: str, message_id: str, text: str, lane: Lane = "next-turn"
    ) -> StepReport:
        given = DeliverInput(self._ref.store_url, session_id, message_id, text, lane)
        return await self._activity("deliver", given)

    async def run_turn(
        self,
        session_id: str,
        seq: int,
        message_ids: tuple[str, ...],
        decide: Decide | None,
        control: TurnControl | None = None,
    ) -> TurnOutcome:
        """Model step, its tool calls, next model step ... until the turn ends (or
        ``control`` cancels it: then it is closed ``aborted``)."""
        store = self._ref.store_url
        control = control or TurnControl()
        while True:
            while control.steers and not control.cancelled:
                steer = control.steers[0]
                report = await self.deliver(session_id, steer.message_id, steer.text, "next-step")
                control.steers.pop(0)
                seq = report.end_seq
                message_ids = (*message_ids, steer.message_id)
            if control.cancelled:
                return await self._abort(session_id, seq)
            report = await self._activity(
                "model_step", ModelStepInput(store, session_id, seq, message_ids)
            )
            seq = report.end_seq
            if report.turn_end is not None or report.step is None:
                return TurnOutcome(session_id, report.turn, report.turn_end, seq, report.queued)
            for call_id in map(CallId, report.calls):
                if control.cancelled:
                    return await self._abort(session_id, seq)
                if call_id in report.awaiting_approval:
                    if decide is None:
                        raise ApplicationError(
                            f"call {call_id!r} waits for approval and the run has no decide=",
                            type="ApprovalNeeded",
                            non_retryable=True,
                        )
                    decision = await decide(call_id)
                    if control.cancelled:
                        return await self._abort(session_id, seq)
                    decided = DecisionInput(
                        store, session_id, seq, call_id, decision.approved, decision.reason
                    )
                    seq = (await self._activity("decide", decided)).end_seq
                    if not decision.approved:
                        continue  # the denial committed its result
                given = ToolStepInput(store, session_id, seq, call_id)
                seq = (await self._activity("tool_call", given)).end_seq

    async def _abort(self, session_id: str, seq: int) -> TurnOutcome:
        report = await self._activity("abort", AbortInput(self._ref.store_url, session_id, seq))
        return TurnOutcome(session_id, report.turn, report.turn_end, report.end_seq, report.queued)

    async def _activity(self, piece: str, given: object) -> StepReport:
        ref = self._ref
        report: StepReport = await workflow.execute_activity(
            f"{ref.name}.{piece}",
            given,
            result_type=StepReport,
            start_to_close_timeout=timedelta(seconds=ref.start_to_close_seconds),
            heartbeat_timeout=timedelta(seconds=ref.heartbeat_seconds),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=ref.retry_initial_seconds),
                maximum_interval=timedelta(seconds=ref.retry_maximum_seconds),
                non_retryable_error_types=["DurableStepError"],
            ),
        )
        return report


__all__ = [
    "AgentRef",
    "Decide",
    "Decision",
    "StepScheduler",
    "TurnControl",
    "session_workflow_id",
]
