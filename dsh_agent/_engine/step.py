"""One step of a turn: the entered messages, the request, the model stream (every
chunk logged as it arrives), the assistant message, then the tool calls it requested
(:mod:`dsh_agent._engine.tool_runner`: results in model order).

The step is bracketed by ``step/start`` and ``step/end`` whatever happens inside it,
except when a call waits for approval (:mod:`dsh_agent.approvals`): then the step
stays open and :meth:`StepRunner.resume` goes on with it once the call is decided;
cancellation ends the stream at once (keeping a non-blank prefix as an interrupted
message) but lets a running tool drain, and commits the calls not yet started as
aborted before dispatch, so the next request stays valid for the provider.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import Literal, TypeVar

from dsh_agent._cancellation import CancelScope, _TurnAborted
from dsh_agent._engine.context import EngineContext, Prelude
from dsh_agent._engine.tool_runner import ToolRunner, over_limit
from dsh_agent._engine.turn_options import TurnOptions, TurnRequests
from dsh_agent._live_updates import AssistantStarted
from dsh_agent.approvals._gate import _ApprovalsPending
from dsh_agent.approvals._open_step import open_step
from dsh_agent.requests import build_request, diff_requests, reconstruct_request
from dsh_agent.tools import Tool
from dsh_llm._assembler import BlockAssembler
from dsh_llm._content import ToolCallBlock
from dsh_llm._failure import LlmFailure, describe_exception
from dsh_llm._messages import UserMessage
from dsh_llm._request import GenerateRequest, ModelAdapter
from dsh_llm._stream import AbortedFinish, ErrorFinish, FinishChunk, MaxTokensFinish, StreamChunk
from dsh_llm.errors import LlmError
from dsh_llm.failure_codes import (
    INVALID_REQUEST,
    MALFORMED_RESPONSE,
    STREAM_CLOSED,
    USAGE_LIMIT_EXCEEDED,
)
from dsh_llm.providers import FallbackAdapter
from dsh_session.events import (
    AssistantChunkData,
    AssistantMessageData,
    CompletedReason,
    ErrorReason,
    MaxTokensReason,
    RequestConfig,
    RequestHeader,
    RequestHeaderData,
    StepData,
    TurnEndReason,
)

_log = logging.getLogger("dsh_agent")

INCOMPLETE_STREAM = STREAM_CLOSED
"""The failure code of an attempt whose stream ended without a ``finish`` chunk (the
harness's code for a stream that ended early)."""
MALFORMED_STREAM = MALFORMED_RESPONSE
"""The failure code of an attempt whose chunks cannot be assembled into a message; the
message says the chunks, not the provider's bytes, were at fault."""

_COMPLETED = CompletedReason()
_MAX_TOKENS = MaxTokensReason()
_T = TypeVar("_T")


class StepRunner:
    """Runs the steps of one agent's turns against its session, adapter and tools."""

    def __init__(
        self,
        *,
        context: EngineContext,
        adapter: ModelAdapter,
        requests: TurnRequests,
        check_requests: bool,
    ) -> None:
        self._ctx = context
        self._adapter = adapter
        self.requests = requests
        """The header and tools of the turn's requests (the run's options included)."""
        self._check_requests = check_requests
        self._header_logged = False
        self._fallback: tuple[int, str, str] | None = None
        """The turn moved to a fallback model: the turn, its provider and model."""
        self._concluded_waiting: set[tuple[int, int]] = set()
        """Steps that committed a concluding result, then waited for approval: the
        turn ends when they go on (in this process; the log does not say)."""
        self._tool_runner = ToolRunner(context=context, tools=requests.tools)

    def begin_turn(self, turn: int, options: TurnOptions) -> None:
        """Run ``turn`` with the run options its ``turn/start`` records."""
        self.requests.begin(turn, options)
        self._offer(self.requests.tools)

    def resume_turn(self, turn: int) -> None:
        """Go on with ``turn`` with its own run options (restored from the log when
        another process opened it)."""
        self.requests.resume(turn)
        self._offer(self.requests.tools)

    def end_turn(self) -> None:
        """The turn ended: the loop's own header and tools (and first model) from the
        next turn on."""
        self.requests.end()
        self._fallback = None
        self._offer(self.requests.tools)

    def _offer(self, tools: Mapping[str, Tool]) -> None:
        self._tool_runner.tools = tools
        self._ctx.approvals.tools = tools

    @property
    def tool_tasks(self) -> frozenset[asyncio.Task[object]]:
        """The tasks running tool calls right now."""
        return frozenset(self._tool_runner.tasks)

    async def run(
        self,
        scope: CancelScope,
        turn: int,
        step: int,
        entering: tuple[UserMessage, ...],
        prelude: Prelude | None = None,
    ) -> TurnEndReason | None:
        """Run one step; return how it would end the turn (completed, max-tokens or an
        error), or None when tools ran and the model needs another step. Raises
        :class:`_TurnAborted` once the step is closed when the turn was cancelled."""
        bracket = StepData(turn=turn, step=step)  # one value for step/start and step/end
        self._ctx.session.append("step/start", bracket)
        return await self._closing(bracket, self._attempts(scope, turn, step, entering, prelude))

    async def _attempts(
        self,
        scope: CancelScope,
        turn: int,
        step: int,
        entering: tuple[UserMessage, ...],
        prelude: Prelude | None,
    ) -> TurnEndReason | None:
        """The inside of :meth:`run`, between ``step/start`` and ``step/end``."""
        append = self._ctx.session.append
        if prelude is not None:
            prelude(turn, step)
        for message in entering:
            append("user/message", message)
        while True:  # one attempt, and one more after each retry wait or fallback
            request = await self._request(turn, step)
            if self._check_requests:
                differences = diff_requests(request, reconstruct_request(self._ctx.session.events))
                if differences:
                    mismatch = "; ".join(differences)
                    # The harness has no check mode; its nearest code, detail in the message.
                    failure = LlmFailure(
                        message=f"request mismatch: {mismatch}", code=INVALID_REQUEST
                    )
                    return ErrorReason(error=failure)
            await self._ctx.checkpoint(scope)
            outcome = await self._answer_within_limits(scope, turn, step, request)
            if await self._ctx.window.recover(scope, turn, outcome):  # overflow: compacted
                request = await self._request(turn, step)
                outcome = await self._answer_within_limits(scope, turn, step, request)
            if not isinstance(outcome, ErrorReason) or outcome.error.code == USAGE_LIMIT_EXCEEDED:
                return outcome  # a usage limit is no glitch: neither retried nor fallen back
            retries = self._ctx.retries
            if retries is not None and await retries.wait(
                scope, turn, step, request.provider, outcome.error
            ):
                continue
            if not self._fall_back(turn, request, outcome.error):
                return outcome

    async def resume(self, scope: CancelScope, turn: int, step: int) -> TurnEndReason | None:
        """Go on with the tool phase of ``step``, left open waiting for approval
        (possibly by another process), then close the step: completed when a result
        concluded the turn, else None. Raises :class:`_ApprovalsPending` again while a
        call is still undecided."""
        current = open_step(self._ctx.session)
        assert current is not None and (current.turn, current.step) == (turn, step)
        tools = self._run_tools(scope, turn, step, current.calls)
        concluded = await self._closing(
            StepData(turn=turn, step=step), self._settled(tools, turn, step)
        )
        scope.check()
        return _COMPLETED if concluded else None

    async def _settled(self, tools: Awaitable[bool], turn: int, step: int) -> bool:
        """The resumed tool phase, then a concluded structured-output turn settled."""
        concluded = await tools
        if concluded:
            self.requests.settle_output(self._ctx.inbox, turn, step, answered=True)
        return concluded

    async def _closing(self, bracket: StepData, body: Awaitable[_T]) -> _T:
        """Await ``body``, then append ``step/end`` however it ends, unless it waits for
        approval. (A coroutine, not a context manager: this runs twice a tool turn.)"""
        try:
            result = await body
        except _ApprovalsPending:
            raise
        except BaseException:
            self._ctx.session.append("step/end", bracket)
            raise
        self._ctx.session.append("step/end", bracket)
        return result

    def _fall_back(self, turn: int, request: GenerateRequest, failure: LlmFailure) -> bool:
        """Move the rest of ``turn`` to the next model of a :class:`FallbackAdapter`
        after ``failure`` (its retries spent); False when there is none to move to."""
        adapter = self._adapter
        if not isinstance(adapter, FallbackAdapter):
            return False
        route = adapter.next_route(request.provider, request.model, failure)
        if route is None:
            return False
        provider, model = route
        _log.warning(
            "agent %s: %s:%s failed (%s); falling back to %s:%s",
            self._ctx.session.id,
            request.provider,
            request.model,
            failure.code,
            provider,
            model,
        )
        self._fallback = (turn, provider, model)
        return True

    async def _request(self, turn: int, step: int) -> GenerateRequest:
        """Log the header when needed, then build the request from it and the derived
        history (the very message objects of the log). The first request of this runner
        always logs it (``initial`` on a log without one, else ``resume``); later ones
        only when the log's latest header differs (``change``: another writer, or a
        fallback model for the rest of ``turn``)."""
        session = self._ctx.session
        header, logged = await self.requests.header(turn, step), session.request_header
        if self._fallback is not None and self._fallback[0] == turn:
            header = _routed(header, *self._fallback[1:])
        if not self._header_logged or (logged is not header and logged != header):
            reason: Literal["initial", "resume", "change"] = (
                "change" if self._header_logged else "initial" if logged is None else "resume"
            )
            session.append("request/header", RequestHeaderData(header=header, reason=reason))
            self._header_logged = True
        self._ctx.window.note_route(header)
        return build_request(header, session.derive_messages())

    async def _answer_within_limits(
        self, scope: CancelScope, turn: int, step: int, request: GenerateRequest
    ) -> TurnEndReason | None:
        """:meth:`_answer`, unless the usage limits refuse the request."""
        usage = self._ctx.usage
        refused = None if usage is None else usage.refuse_request(turn)
        if refused is not None:
            _log.info("agent %s: %s", self._ctx.session.id, refused.message)
            return ErrorReason(error=refused)
        return await self._answer(scope, turn, step, request)

    async def _answer(
        self, scope: CancelScope, turn: int, step: int, request: GenerateRequest
    ) -> TurnEndReason | None:
        """Stream the model's answer, commit it, and run the tool calls it requests."""
        assembler = BlockAssembler()
        self._ctx.notify(AssistantStarted(assembler.message_id, turn, step))
        chunk_seqs: list[int] = []
        provider, model = request.provider, request.model
        try:
            with scope.interruptible():
                await self._stream(scope, turn, step, request, assembler, chunk_seqs)
        except _TurnAborted:
            prefix = assembler.interrupted_message(provider=provider, model=model)
            if prefix is not None:
                self._ctx.session.append(
                    "assistant/message",
                    AssistantMessageData(
                        turn=turn,
                        step=step,
                        message=prefix,
                        usage=assembler.usage,
                        interrupted=True,
                    ),
                    source_event_seqs=tuple(chunk_seqs),
                )
            raise
        finish = assembler.finish
        if isinstance(finish, ErrorFinish | AbortedFinish):
            return ErrorReason(error=finish.failure)
        try:
            message = assembler.message(provider=provider, model=model)
        except Exception as error:  # e.g. a block type only a block-end can carry
            # The attempt already ended at its finish chunk: the turn ends with the
            # failure, and no second finish is logged for it.
            return ErrorReason(error=_malformed(error))
        self._ctx.session.append(
            "assistant/message",
            AssistantMessageData(turn=turn, step=step, message=message, usage=assembler.usage),
            source_event_seqs=tuple(chunk_seqs),
        )
        calls = [block for block in message.content if isinstance(block, ToolCallBlock)]
        usage = self._ctx.usage
        refused = None if usage is None or not calls else usage.refuse_tool_calls(turn, len(calls))
        if refused is not None:
            _log.info("agent %s: %s", self._ctx.session.id, refused.message)
            outcome = over_limit(refused.message)
            self._tool_runner.answer_unstarted(scope, turn, step, calls, outcome)
            return ErrorReason(error=refused)
        concluded = bool(calls) and await self._run_tools(scope, turn, step, calls, fresh=True)
        scope.check()
        if calls and not concluded:
            return None
        self.requests.settle_output(self._ctx.inbox, turn, step, answered=concluded)
        return _MAX_TOKENS if isinstance(finish, MaxTokensFinish) else _COMPLETED

    async def _stream(
        self,
        scope: CancelScope,
        turn: int,
        step: int,
        request: GenerateRequest,
        assembler: BlockAssembler,
        chunk_seqs: list[int],
    ) -> None:
        """Log every chunk as it arrives, up to and including the first ``finish``: the
        attempt ends there and the stream is closed unread. An adapter that raises, a
        chunk the assembler refuses, or a stream that ends without a finish is logged
        as one terminal ``finish {error}`` chunk, so every attempt in the log ends with
        exactly one finish."""
        failure: LlmFailure | None = None
        try:
            stream = self._adapter.stream(request)
            try:
                failure = await self._consume(scope, turn, step, stream, assembler, chunk_seqs)
            finally:
                await _close(stream)
        except Exception as error:
            _log.warning("agent %s: the model adapter raised", self._ctx.session.id, exc_info=True)
            failure = LlmFailure.from_exception(error)
        if failure is not None:
            finish = _error_finish(failure)
            self._record_chunk(turn, step, finish, chunk_seqs)
            assembler.push(finish)

    async def _consume(
        self,
        scope: CancelScope,
        turn: int,
        step: int,
        stream: AsyncIterator[StreamChunk],
        assembler: BlockAssembler,
        chunk_seqs: list[int],
    ) -> LlmFailure | None:
        """Log and assemble chunks until the first finish (or a cancel); the failure to
        log when the stream ends without one."""
        async for chunk in stream:
            self._record_chunk(turn, step, chunk, chunk_seqs)
            try:
                assembler.push(chunk)
            except LlmError as error:  # logged, but it does not fit the stream so far
                return _malformed(error)
            if isinstance(chunk, FinishChunk) or scope.cause is not None:
                return None  # finished, or cancelled by an observer of this chunk
        if scope.cause is not None:
            return None
        return LlmFailure(
            message="the model stream ended without a finish chunk", code=INCOMPLETE_STREAM
        )

    def _record_chunk(
        self, turn: int, step: int, chunk: StreamChunk, chunk_seqs: list[int]
    ) -> None:
        event = self._ctx.session.append(
            "assistant/chunk", AssistantChunkData(turn=turn, step=step, chunk=chunk)
        )
        chunk_seqs.append(event.seq)

    async def _run_tools(
        self,
        scope: CancelScope,
        turn: int,
        step: int,
        calls: Sequence[ToolCallBlock],
        *,
        fresh: bool = False,
    ) -> bool:
        """Run the calls the approval gate admits through the tool runner, until one
        waits for a decision (raise :class:`_ApprovalsPending`) or all are answered; True
        when a result concludes the turn. A cancelled turn or a failing loop withdraws
        the open asks, and the calls left are answered. ``fresh``: the calls of the
        message just committed (see :meth:`ApprovalGate.admit`)."""
        concluded = (turn, step) in self._concluded_waiting
        self._concluded_waiting.discard((turn, step))
        try:
            while True:
                if scope.cause is not None:
                    admitted, waiting = self._ctx.approvals.withdraw(calls), False
                else:
                    admitted, waiting = self._ctx.approvals.admit(turn, step, calls, fresh=fresh)
                    fresh = False
                if await self._tool_runner.run(scope, turn, step, admitted):
                    concluded = True
                if not waiting:
                    return concluded
                if not admitted:
                    raise _ApprovalsPending
        except _ApprovalsPending:
            if concluded:
                self._concluded_waiting.add((turn, step))
            raise
        except Exception as error:
            left = self._ctx.approvals.withdraw(calls)
            self._tool_runner.answer_not_started(scope, turn, step, left, error)
            raise


def _malformed(error: Exception) -> LlmFailure:
    detail = describe_exception(error, with_type=False)
    return LlmFailure(
        message=f"the model stream cannot be assembled: {detail}", code=MALFORMED_STREAM
    )


def _error_finish(failure: LlmFailure) -> FinishChunk:
    return FinishChunk(reason=ErrorFinish(failure=failure))


async def _close(stream: AsyncIterator[StreamChunk]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


def _routed(header: RequestHeader, provider: str, model: str) -> RequestHeader:
    """``header`` naming the fallback ``provider`` and ``model`` instead of its own."""
    config = RequestConfig.model_validate(
        {**dict(header.config), "provider": provider, "model": model}
    )
    return RequestHeader(
        config=config,
        adapter_defaults=header.adapter_defaults,
        system=header.system,
        tools=header.tools,
    )


__all__ = [
    "INCOMPLETE_STREAM",
    "MALFORMED_STREAM",
    "StepRunner",
]
