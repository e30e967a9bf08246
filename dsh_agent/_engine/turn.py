"""One turn of an agent: open it, run its steps, end it with one reason.

A turn opens with ``turn/start`` and the claim of its first step's input. Each step is
claim → pre-step → the step itself (:mod:`dsh_agent._engine.step`); the turn goes on while
tools ran or next-step input is pending, and ends with exactly one ``turn/end``
(``completed``, ``max-tokens``, ``blocked``, ``error`` or ``aborted``), flushed at
once, unless a tool call waits for approval: then the turn stays open (flushed) and
:meth:`TurnRunner.run` with ``resume_step`` goes on with it later. The loop
(:mod:`dsh_agent._engine.loop`) decides when turns start; this decides how one runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dsh_agent._cancellation import CancelScope, _TurnAborted
from dsh_agent._engine.step import Checkpoint, Prelude, StepRunner
from dsh_agent._notifications import InboxClaimed, Notification
from dsh_agent._prestep import PreStep, PreStepHandler, Reject, run_pre_step
from dsh_agent.approvals._gate import _ApprovalsPending
from dsh_agent.compaction._hook import ContextHook
from dsh_agent.inbox import Inbox
from dsh_llm._messages import UserMessage
from dsh_llm._stream import LlmFailure
from dsh_session._session import Session
from dsh_session.events import (
    AbortedReason,
    BlockedReason,
    CompletedReason,
    ErrorReason,
    MaxTokensReason,
    TurnEndData,
    TurnEndReason,
    TurnStartData,
)

if TYPE_CHECKING:
    from dsh_agent._agent import Agent

_log = logging.getLogger("dsh_agent")

_COMPLETED = CompletedReason()
_BLOCKED = BlockedReason()


class TurnRunner:
    """Runs the turns of one agent, one at a time. ``pre_step_handlers`` is the
    agent's own list (read at each step, so handlers added later take part). ``agent``
    answers the agent (a weak reference: the driver holds it while a turn runs)."""

    def __init__(
        self,
        *,
        agent: Callable[[], Agent | None],
        session: Session,
        inbox: Inbox,
        steps: StepRunner,
        pre_step_handlers: Sequence[PreStepHandler],
        checkpoint: Checkpoint,
        notify: Callable[[Notification], None],
        context: ContextHook,
    ) -> None:
        self._agent = agent
        self._context = context
        self._session = session
        self._inbox = inbox
        self._steps = steps
        self._pre_step_handlers = pre_step_handlers
        self._checkpoint = checkpoint
        self._notify = notify

    def open(self, *, claim: bool = True) -> tuple[int, tuple[UserMessage, ...]]:
        """Write ``turn/start`` and claim the first step's input (unless not
        ``claim``: a turn that runs a failed one again takes no new input),
        synchronously: the new turn's number and the claimed messages."""
        turn = self._session.last_turn + 1
        self._session.append("turn/start", TurnStartData(turn=turn))
        if not claim:
            return turn, ()
        return turn, self._announce_claim(turn, self._inbox.claim_first_step())

    def _announce_claim(
        self, turn: int, claimed: tuple[UserMessage, ...]
    ) -> tuple[UserMessage, ...]:
        for message in claimed:
            self._notify(InboxClaimed(message, turn))
        return claimed

    async def run(
        self,
        scope: CancelScope,
        turn: int,
        claimed: tuple[UserMessage, ...],
        *,
        again: bool = False,
        prelude: Prelude | None = None,
        resume_step: int | None = None,
    ) -> TurnEndReason | None:
        """Run the opened ``turn`` to its end and return the reason logged for it, or
        ``None`` when it waits for approval. Its first step asks the model even with no
        input when ``again`` (the turn runs a failed one again over the same history)
        or given a ``prelude`` (see :data:`Prelude`). With ``resume_step``, first go on
        with that step's tool phase (the turn was waiting for approval)."""
        step = resume_step or 0
        ending: TurnEndReason | None = None  # how the previous step would end the turn
        try:
            if resume_step is not None:
                ending = await self._steps.resume(scope, turn, resume_step)
            while True:
                step += 1
                if step > 1:
                    claimed = self._announce_claim(turn, self._inbox.claim_next_step())
                entering = await self._pre_step(scope, claimed, turn, step)
                if entering is None:
                    return await self._end(scope, turn, _BLOCKED)
                first_runs_anyway = again or prelude is not None
                if not entering and ((step == 1 and not first_runs_anyway) or ending is not None):
                    return await self._end(scope, turn, ending or _COMPLETED)
                outcome = await self._steps.run(
                    scope, turn, step, entering, prelude if step == 1 else None
                )
                if outcome is None:  # tools ran: the model needs another step
                    ending = None
                    continue
                if isinstance(outcome, ErrorReason):
                    return await self._end(scope, turn, outcome)
                if not isinstance(ending, MaxTokensReason):  # max-tokens is sticky
                    ending = outcome
                if not self._inbox.next_step:
                    return await self._end(scope, turn, ending)
        except _ApprovalsPending:
            await self._checkpoint(scope)
            return None
        except _TurnAborted:
            pass
        except Exception as error:
            if scope.cause is None:
                _log.exception("agent %s: turn %d failed", self._session.id, turn)
                failure = LlmFailure.from_exception(error)
                return await self._end(scope, turn, ErrorReason(error=failure))
        assert scope.cause is not None
        return await self._end(scope, turn, AbortedReason(reason=scope.cause))

    async def _end(self, scope: CancelScope, turn: int, reason: TurnEndReason) -> TurnEndReason:
        self._session.append("turn/end", TurnEndData(turn=turn, reason=reason))
        try:
            await self._checkpoint(scope)
        except Exception:  # the store keeps the batch and reports it at the next flush
            _log.exception("agent %s: flushing the end of turn %d failed", self._session.id, turn)
        return reason

    async def _pre_step(
        self, scope: CancelScope, claimed: tuple[UserMessage, ...], turn: int, step: int
    ) -> tuple[UserMessage, ...] | None:
        """The messages entering the step, or None when a handler rejected it."""
        await self._checkpoint(scope)
        await self._context.before_step(scope, turn)
        handlers = tuple(self._pre_step_handlers)
        if not handlers:
            scope.check()
            return claimed
        agent = self._agent()
        assert agent is not None  # the driver holds the agent while its turn runs
        with scope.interruptible():
            decision = await run_pre_step(handlers, PreStep(agent, claimed, turn, step))
        return None if isinstance(decision, Reject) else tuple(decision.messages)
