"""One turn of an agent: open it, run its steps, end it with one reason.

A turn opens with ``turn/start`` and the claim of its first step's input. Each step is
claim → pre-step → the step itself (:mod:`dsh_agent._engine.step`); the turn goes on while
tools ran or next-step input is pending, and ends with exactly one ``turn/end``
(``completed``, ``max-tokens``, ``blocked``, ``error`` or ``aborted``), flushed at
once, unless a tool call waits for approval: then the turn stays open (flushed) and
:meth:`TurnRunner.run` with a :class:`Resume` kind goes on with it later. The loop
(:mod:`dsh_agent._engine.loop`) decides when turns start; this decides how one runs.
"""

from __future__ import annotations

import logging

from dsh_agent._agent import PreStep, Reject
from dsh_agent._cancellation import CancelScope, _TurnAborted
from dsh_agent._engine.context import EngineContext, Fresh, Regenerate, Rerun, Resume, TurnKind
from dsh_agent._engine.step import StepRunner
from dsh_agent._engine.turn_options import prompt_turn
from dsh_agent._live_updates import MessageClaimed
from dsh_agent._prestep import run_pre_step
from dsh_agent.approvals._gate import _ApprovalsPending
from dsh_llm._failure import LlmFailure
from dsh_llm._messages import UserMessage
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

_log = logging.getLogger("dsh_agent")

_COMPLETED = CompletedReason()
_BLOCKED = BlockedReason()


class TurnRunner:
    """Runs the turns of one agent, one at a time, with its ``steps``."""

    def __init__(self, *, context: EngineContext, steps: StepRunner) -> None:
        self._ctx = context
        self._steps = steps

    def open(self, kind: TurnKind) -> tuple[int, tuple[UserMessage, ...]]:
        """Write ``turn/start`` and claim the first step's input (a :class:`Rerun`
        takes no new input), synchronously: the new turn's number and the claimed
        messages."""
        session = self._ctx.session
        turn = session.last_turn + 1
        again = (
            kind.target.turn
            if isinstance(kind, Rerun)
            else prompt_turn(session)
            if isinstance(kind, Regenerate)
            else None
        )
        options = self._steps.requests.opening(again)
        session.append("turn/start", TurnStartData(turn=turn, run_options=options.record()))
        self._steps.begin_turn(turn, options)
        if isinstance(kind, Rerun):
            return turn, ()
        return turn, self._announce_claim(turn, self._ctx.inbox.claim_first_step())

    def _announce_claim(
        self, turn: int, claimed: tuple[UserMessage, ...]
    ) -> tuple[UserMessage, ...]:
        for message in claimed:
            self._ctx.notify(MessageClaimed(message, turn))
        return claimed

    async def run(
        self,
        scope: CancelScope,
        turn: int,
        claimed: tuple[UserMessage, ...],
        kind: TurnKind,
    ) -> TurnEndReason | None:
        """Run the opened ``turn`` to its end and return the reason logged for it, or
        ``None`` when it waits for approval. A :class:`Fresh` turn with no input ends
        ``completed`` at once; a :class:`Rerun` or :class:`Regenerate` one asks the
        model anyway (the latter running its prelude in the first step); a
        :class:`Resume` first goes on with its open step's tool phase."""
        inbox = self._ctx.inbox
        step = kind.step if isinstance(kind, Resume) else 0
        ending: TurnEndReason | None = None  # how the previous step would end the turn
        try:
            if isinstance(kind, Resume):
                self._steps.resume_turn(turn)
                ending = await self._steps.resume(scope, turn, kind.step)
            while True:
                step += 1
                if step > 1:
                    claimed = self._announce_claim(turn, inbox.claim_next_step())
                entering = await self._pre_step(scope, claimed, turn, step)
                if entering is None:
                    return await self._end(scope, turn, _BLOCKED)
                if not entering and ((step == 1 and isinstance(kind, Fresh)) or ending is not None):
                    return await self._end(scope, turn, ending or _COMPLETED)
                prelude = kind.prelude if step == 1 and isinstance(kind, Regenerate) else None
                outcome = await self._steps.run(scope, turn, step, entering, prelude)
                if outcome is None:  # tools ran: the model needs another step
                    ending = None
                    continue
                if isinstance(outcome, ErrorReason):
                    return await self._end(scope, turn, outcome)
                if not isinstance(ending, MaxTokensReason):  # max-tokens is sticky
                    ending = outcome
                if not inbox.next_step:
                    return await self._end(scope, turn, ending)
        except _ApprovalsPending:
            await self._ctx.checkpoint(scope)
            return None
        except _TurnAborted:
            pass
        except Exception as error:
            if scope.cause is None:
                _log.exception("agent %s: turn %d failed", self._ctx.session.id, turn)
                failure = LlmFailure.from_exception(error)
                return await self._end(scope, turn, ErrorReason(error=failure))
        assert scope.cause is not None
        return await self._end(scope, turn, AbortedReason(reason=scope.cause))

    async def _end(self, scope: CancelScope, turn: int, reason: TurnEndReason) -> TurnEndReason:
        session = self._ctx.session
        session.append("turn/end", TurnEndData(turn=turn, reason=reason))
        self._steps.end_turn()
        try:
            await self._ctx.checkpoint(scope)
        except Exception:  # the store keeps the batch and reports it at the next flush
            _log.exception("agent %s: flushing the end of turn %d failed", session.id, turn)
        return reason

    async def _pre_step(
        self, scope: CancelScope, claimed: tuple[UserMessage, ...], turn: int, step: int
    ) -> tuple[UserMessage, ...] | None:
        """The messages entering the step, or None when a handler rejected it."""
        await self._ctx.checkpoint(scope)
        await self._ctx.window.before_step(scope, turn)
        handlers = tuple(self._ctx.pre_step_handlers)
        if not handlers:
            scope.check()
            return claimed
        agent = self._ctx.agent()
        assert agent is not None  # the driver holds the agent while its turn runs
        with scope.interruptible():
            decision = await run_pre_step(handlers, PreStep(agent, claimed, turn, step))
        return None if isinstance(decision, Reject) else tuple(decision.messages)


__all__ = [
    "TurnRunner",
]
