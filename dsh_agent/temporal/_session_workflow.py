"""The ready workflow: one per session, for people who just want a durable agent.

Input arrives by signal (the client starts the workflow with signal-with-start, so the
first input starts it and later ones join it): ``followup`` queues a message for a turn
of its own, ``steer`` one for the running turn's next step, ``cancel`` aborts the
running turn. While the agent is idle, or a call waits for a person, the workflow
waits on a condition and no worker is held. Approvals are signals, the status a query.
Signals, not updates: the client mints every message id, so sending again is the
receipt (the same id is stored once), and only signals can start the workflow. After
``continue_after_turns`` turns it continues as new carrying only the session id and
the seq the log ends at: the conversation is in the log, not in the workflow's
history. (No ``from __future__ import annotations``: Temporal's converter reads the
signal and query types at run time.)
"""

from dataclasses import dataclass, replace
from typing import Literal

from temporalio import workflow

from dsh_llm import CallId

with workflow.unsafe.imports_passed_through():
    from dsh_agent.temporal._payloads import SessionInput
    from dsh_agent.temporal._scheduler import AgentRef, Decision, StepScheduler, TurnControl

SessionState = Literal["idle", "running", "awaiting-approval"]


@dataclass(frozen=True, slots=True)
class SessionWorkflowInput:
    """What a session's workflow run starts from."""

    agent: AgentRef
    session_id: str
    continue_after_turns: int = 50
    """Continue as new after this many turns in one run."""
    end_seq: int = 0
    """The seq the log ended at when the run started (carried over continue-as-new)."""
    turns_before: int = 0
    """Turns run by earlier runs of this workflow."""


@dataclass(frozen=True, slots=True)
class Denial:
    """The ``deny`` signal's value."""

    call_id: CallId
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class SessionStatus:
    """The ``status`` query's answer."""

    state: SessionState
    turns: int
    """Turns run since the workflow started (across continue-as-new)."""
    end_seq: int
    awaiting_approval: tuple[str, ...]
    """The ids of the calls waiting for a person's decision."""
    queued_inputs: int
    """Followups signalled and not yet delivered to the log."""
    queued_steers: int = 0
    """Steers signalled and not yet delivered to the log."""
    cancelling: bool = False
    """A cancel of the running turn was signalled and the turn has not ended yet."""


@workflow.defn(name="dsh.session")
class SessionWorkflow:
    """A session's agent, driven by signals (``followup``, ``steer``, ``cancel``,
    ``approve``, ``deny``)."""

    def __init__(self) -> None:
        self._inputs: list[SessionInput] = []
        self._control = TurnControl()
        self._decisions: dict[CallId, Decision] = {}
        self._awaiting: tuple[str, ...] = ()
        self._state: SessionState = "idle"
        self._turns = 0
        self._seq = 0

    @workflow.signal(name="followup")
    def followup(self, message: SessionInput) -> None:
        """A user message for a turn of its own. An id already queued here is
        dropped; one already in the log is dropped by the delivery."""
        if all(queued.message_id != message.message_id for queued in self._inputs):
            self._inputs.append(message)

    @workflow.signal(name="steer")
    def steer(self, message: SessionInput) -> None:
        """A user message for the running turn's next step (the next turn's first step
        when idle); the same id twice is stored once."""
        steers = self._control.steers
        if all(queued.message_id != message.message_id for queued in steers):
            steers.append(message)

    @workflow.signal(name="cancel")
    def cancel(self) -> None:
        """Abort the running turn (nothing when idle)."""
        if self._state != "idle":
            self._control.cancelled = True

    @workflow.signal(name="approve")
    def approve(self, call_id: CallId) -> None:
        self._decisions[call_id] = Decision(approved=True)

    @workflow.signal(name="deny")
    def deny(self, denial: Denial) -> None:
        self._decisions[denial.call_id] = Decision(approved=False, reason=denial.reason)

    @workflow.query(name="status")
    def status(self) -> SessionStatus:
        return SessionStatus(
            state=self._state,
            turns=self._turns,
            end_seq=self._seq,
            awaiting_approval=self._awaiting,
            queued_inputs=len(self._inputs),
            queued_steers=len(self._control.steers),
            cancelling=self._control.cancelled,
        )

    @workflow.run
    async def run(self, given: SessionWorkflowInput) -> None:
        steps = StepScheduler(given.agent)
        self._seq, self._turns = given.end_seq, given.turns_before
        turns_here = 0
        while True:
            await workflow.wait_condition(lambda: bool(self._inputs))
            self._state = "running"
            ids: list[str] = []
            while self._inputs:  # the log's inbox is the queue from here on
                queued = self._inputs[0]
                report = await steps.deliver(given.session_id, queued.message_id, queued.text)
                self._inputs.pop(0)
                self._seq = report.end_seq
                ids.append(queued.message_id)
            while True:
                outcome = await steps.run_turn(
                    given.session_id, self._seq, tuple(ids), self._decide, self._control
                )
                self._seq, ids = outcome.end_seq, []
                if outcome.reason is not None:
                    self._turns += 1
                    turns_here += 1
                if not outcome.queued or self._control.cancelled:
                    break  # every input has had its turn, or the user cancelled
            self._control.cancelled = False  # what is queued waits for the next followup
            self._state = "idle"
            if (
                turns_here >= given.continue_after_turns
                and not self._inputs
                and not self._control.steers
            ):
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(
                    replace(given, end_seq=self._seq, turns_before=self._turns)
                )

    async def _decide(self, call_id: CallId) -> Decision:
        self._awaiting, self._state = (*self._awaiting, call_id), "awaiting-approval"
        await workflow.wait_condition(lambda: call_id in self._decisions or self._control.cancelled)
        self._awaiting = tuple(c for c in self._awaiting if c != call_id)
        self._state = "running"
        return self._decisions.pop(call_id, Decision(approved=False))  # cancelled: unused


__all__ = [
    "Denial",
    "SessionState",
    "SessionStatus",
    "SessionWorkflow",
    "SessionWorkflowInput",
]
