"""The tool calls of one step: exclusive calls one at a time, adjacent
concurrency-safe calls together, every result committed in model order.

The order of the log is the TypeScript harness's (``executeToolCalls`` in its
agent-loop): calls are grouped in model order, an exclusive call (or an unknown tool)
being a group of its own and a run of adjacent safe calls one pool of at most
``max_parallel`` in flight. A call's ``tool/call`` is appended when it starts, in model
order; after each start and each settle, the results ready at the head of the group
are committed (so ``tool/result`` events are in model order, and a result never waits
for a later call). Once the turn is cancelled no call starts: started calls are told
and drained, their results committed, and every call left gets a ``tool/call`` and an
``aborted before dispatch`` result, so the next request stays valid. If the loop itself
fails (e.g. a flush), started calls are drained and committed and the calls left are
answered as not started before the failure propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from dsh_agent._cancellation import CancelScope
from dsh_agent._engine.context import EngineContext
from dsh_agent._engine.settling import until_one_done
from dsh_agent._tool_context import ToolContext
from dsh_agent.tools import Tool, ToolCallOutcome, execute_tool_call
from dsh_llm._content import TextBlock, ToolCallBlock
from dsh_llm._create import create_tool_result_message
from dsh_llm._failure import describe_exception
from dsh_session import tool_failure_codes
from dsh_session.events import ToolCallData, ToolErrorInfo, ToolResultData

DEFAULT_MAX_PARALLEL = 10
"""At most this many safe calls in flight at once (the harness's default)."""

ABORTED_BEFORE_DISPATCH = ToolCallOutcome(
    content=(TextBlock(text="Error: tool call aborted before dispatch"),),
    is_error=True,
    error=ToolErrorInfo(name="AbortError", code=tool_failure_codes.ABORTED_BEFORE_DISPATCH),
    meta=None,
    additional_contexts=(),
)


class ToolRunner:
    """Runs and commits one step's tool calls against a session."""

    def __init__(
        self,
        *,
        context: EngineContext,
        tools: Mapping[str, Tool],
        max_parallel: int = DEFAULT_MAX_PARALLEL,
    ) -> None:
        if max_parallel < 1:
            raise ValueError(f"max_parallel must be at least 1, not {max_parallel}")
        self._ctx = context
        self.tools = tools
        """The tools calls are looked up in (swapped between steps by overrides)."""
        self._max_parallel = max_parallel
        self.tasks: set[asyncio.Task[ToolCallOutcome]] = set()
        """The tasks running tool calls right now."""

    async def run(
        self, scope: CancelScope, turn: int, step: int, calls: Sequence[ToolCallBlock]
    ) -> bool:
        """Run ``calls`` (one assistant message's, in model order) and commit them;
        True when a committed result concludes the turn."""
        batch = _Batch(self, scope, turn, step, calls)
        try:
            while batch.committed < len(calls):
                await batch.run_group(self._group_end(calls, batch.committed))
        except Exception as error:
            await batch.drain()
            batch.answer_rest(_not_started(error))
            raise
        return batch.concluded

    def answer_not_started(
        self,
        scope: CancelScope,
        turn: int,
        step: int,
        calls: Sequence[ToolCallBlock],
        error: Exception,
    ) -> None:
        """Answer ``calls`` (none of them started) as not started because of ``error``:
        e.g. the calls an approval gate held back when the loop failed."""
        self.answer_unstarted(scope, turn, step, calls, _not_started(error))

    def answer_unstarted(
        self,
        scope: CancelScope,
        turn: int,
        step: int,
        calls: Sequence[ToolCallBlock],
        outcome: ToolCallOutcome,
    ) -> None:
        """Answer ``calls`` (none of them started) with ``outcome``."""
        _Batch(self, scope, turn, step, calls).answer_rest(outcome)

    def _group_end(self, calls: Sequence[ToolCallBlock], start: int) -> int:
        """The end (exclusive) of the group starting at ``start``."""
        end = start + 1
        if self._safe(calls[start]):
            while end < len(calls) and self._safe(calls[end]):
                end += 1
        return end

    def _safe(self, call: ToolCallBlock) -> bool:
        selected = self.tools.get(call.name)
        return selected is not None and selected.concurrency_safe


class _Batch:
    """The state of one step's calls: which started, which settled, which committed."""

    def __init__(
        self,
        runner: ToolRunner,
        scope: CancelScope,
        turn: int,
        step: int,
        calls: Sequence[ToolCallBlock],
    ) -> None:
        self._runner = runner
        self._scope = scope
        self._turn = turn
        self._step = step
        self._calls = calls
        self._call_seqs: dict[int, int] = {}
        """Index -> seq of its logged ``tool/call``."""
        self._outcomes: dict[int, ToolCallOutcome] = {}
        self._running: dict[asyncio.Task[ToolCallOutcome], int] = {}
        self.committed = 0
        """Calls answered so far (a prefix, in model order)."""
        self.concluded = False
        """A committed result concludes the turn."""

    async def run_group(self, end: int) -> None:
        """Start the calls up to ``end`` keeping at most ``max_parallel`` in flight,
        committing results in order as the head of the group settles."""
        next_index = self.committed
        while next_index < end or self._running:
            while (
                next_index < end
                and len(self._running) < self._runner._max_parallel
                and self._scope.cause is None
            ):
                await self._start(next_index)
                next_index += 1
                self._commit_ready()
            if self._running:
                await self._wait_one()
                self._commit_ready()
            elif self._scope.cause is not None:
                break
        if self._scope.cause is not None:
            self.answer_rest(ABORTED_BEFORE_DISPATCH)

    async def _start(self, index: int) -> None:
        call = self._calls[index]
        self._call_seqs[index] = self._log_call(call)
        await self._runner._ctx.checkpoint(self._scope)
        if self._scope.cause is not None:
            self._outcomes[index] = ABORTED_BEFORE_DISPATCH
            return
        context = ToolContext(
            call_id=call.call_id,
            turn=self._turn,
            step=self._step,
            cancelled=self._scope.cancelled,
            deps=self._runner._ctx.deps,
            agent=self._runner._ctx.agent(),
            session_id=self._runner._ctx.session.id,
        )
        task = asyncio.ensure_future(execute_tool_call(self._runner.tools, call, context))
        self._running[task] = index
        self._runner.tasks.add(task)

    async def _wait_one(self) -> None:
        """Wait until a running call settles. Nobody cancels a running call: if the
        driver is cancelled from outside, the turn is cancelled (the tools are told)
        and the wait goes on, so started calls drain."""
        try:
            await until_one_done(self._running)
        except asyncio.CancelledError:
            self._scope.cancel_from_outside()
            return
        for task in [task for task in self._running if task.done()]:
            index = self._running.pop(task)
            self._runner.tasks.discard(task)
            self._outcomes[index] = task.result()

    def _commit_ready(self) -> None:
        while (outcome := self._outcomes.pop(self.committed, None)) is not None:
            self._answer(self.committed, outcome)

    def _answer(self, index: int, outcome: ToolCallOutcome) -> None:
        call = self._calls[index]
        call_seq = self._call_seqs.get(index)
        if call_seq is None:
            call_seq = self._call_seqs[index] = self._log_call(call)
        message = create_tool_result_message(
            call_id=call.call_id, content=outcome.content, is_error=outcome.is_error
        )
        self._runner._ctx.session.append(
            "tool/result",
            ToolResultData(
                turn=self._turn,
                step=self._step,
                message=message,
                error=outcome.error,
                meta=outcome.meta,
            ),
            source_event_seqs=(call_seq,),
        )
        self.committed = index + 1
        self.concluded = self.concluded or outcome.concludes_turn
        for context in outcome.additional_contexts:
            self._runner._ctx.inbox.append("next-step", context)

    def answer_rest(self, outcome: ToolCallOutcome) -> None:
        """Commit what settled, then answer every call left with ``outcome``."""
        self._commit_ready()
        while self.committed < len(self._calls):
            self._answer(self.committed, self._outcomes.pop(self.committed, outcome))

    async def drain(self) -> None:
        """Let every started call finish (after a failure of the loop itself)."""
        while self._running:
            await self._wait_one()

    def _log_call(self, call: ToolCallBlock) -> int:
        data = ToolCallData(
            turn=self._turn,
            step=self._step,
            call_id=call.call_id,
            name=call.name,
            arguments=call.arguments,
        )
        return self._runner._ctx.session.append("tool/call", data).seq


def _not_started(error: Exception) -> ToolCallOutcome:
    text = (
        f"Error: the tool call was not started because the agent loop failed first "
        f"({describe_exception(error)}). Retry it if it is still needed."
    )
    return ToolCallOutcome(
        content=(TextBlock(text=text),),
        is_error=True,
        error=ToolErrorInfo(name="ToolNotStartedError", code=tool_failure_codes.TOOL_NOT_STARTED),
        meta=None,
        additional_contexts=(),
    )


def over_limit(reason: str) -> ToolCallOutcome:
    """The answer to a call the tool call limit refused (``reason`` says which)."""
    text = f"Error: the tool call was not run: {reason}."
    return ToolCallOutcome(
        content=(TextBlock(text=text),),
        is_error=True,
        error=ToolErrorInfo(
            name="UsageLimitExceeded", code=tool_failure_codes.TOOL_CALL_LIMIT_EXCEEDED
        ),
        meta=None,
        additional_contexts=(),
    )


__all__ = [
    "ABORTED_BEFORE_DISPATCH",
    "DEFAULT_MAX_PARALLEL",
    "ToolRunner",
    "over_limit",
]
