"""Owned runs: send one followup and collect what happened until the agent is idle,
optionally with model settings, instructions and a structured output type for that
run's turns only (they stay with each turn until it ends: see
:mod:`dsh_agent._engine.turn_options`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol, Unpack, overload, runtime_checkable

from pydantic import BaseModel
from typing_extensions import TypeVar

from dsh_agent._agent import Agent
from dsh_agent._model_settings import ModelSettings
from dsh_agent._run_options import (
    OutputRunOptions,
    RunOptions,
    RunPrompt,
    unknown_options,
    user_prompt,
)
from dsh_agent._run_result import RunResult
from dsh_agent._structured_output import DEFAULT_OUTPUT_CORRECTIONS, OutputCollector
from dsh_agent.errors import OutputPendingError, TurnFailed, UsageLimitExceeded
from dsh_agent.tools import Tool
from dsh_llm._content import TextBlock
from dsh_llm._ids import MessageId
from dsh_llm.failure_codes import USAGE_LIMIT_EXCEEDED
from dsh_session.events import (
    AssistantMessageEvent,
    ErrorReason,
    SessionEvent,
    TurnEndEvent,
)

ModelT = TypeVar("ModelT", bound=BaseModel)


@runtime_checkable
class RequestOverridable(Protocol):
    """An agent whose requests can take per-run settings and tools (``AgentLoop``)."""

    def request_overrides(
        self,
        settings: ModelSettings | None = None,
        tools: Sequence[Tool] = (),
        *,
        instructions: str | None = None,
    ) -> AbstractContextManager[None]: ...


@overload
async def run(
    agent: Agent,
    message: RunPrompt,
    *,
    output_type: None = None,
    **options: Unpack[RunOptions],
) -> RunResult: ...


@overload
async def run(
    agent: Agent,
    message: RunPrompt,
    *,
    output_type: type[ModelT],
    **options: Unpack[OutputRunOptions],
) -> RunResult[ModelT]: ...


async def run(
    agent: Agent,
    message: RunPrompt,
    *,
    output_type: type[BaseModel] | None = None,
    **options: Unpack[OutputRunOptions],
) -> RunResult[Any]:
    """Send ``message`` as a followup, wait until ``agent`` is idle, and summarize the
    events logged in between. ``message`` is a ``UserMessage``, or text or content
    blocks from which the run creates one (``create_user_message``, the user as its
    source); ``RunResult.message_id`` is the id of the message delivered.

    ``settings`` override the loop's model settings for this run's requests, and
    ``instructions`` are added to its system prompt. With ``output_type`` (a Pydantic
    model) the model is offered a ``final_result`` tool taking that model's schema;
    ``RunResult.output`` is the validated answer, and after ``output_corrections``
    failed attempts :class:`OutputValidationError` is raised; the corrections then
    leave the history later requests are built from (the log keeps them). These
    options belong to the run's turns, which keep them to their end, across an
    approval wait and a restart; they need an idle agent that supports request
    overrides (``AgentLoop``). A run whose turn stops at an approval wait returns
    then; its ``output`` is read once the turn has answered. The options are
    :class:`~dsh_agent.RunOptions` (:class:`~dsh_agent.OutputRunOptions` with an
    ``output_type``).

    Raises :class:`~dsh_agent.TurnFailed` (carrying the failure and the result) when
    the interval's last turn ended ``error`` (:class:`~dsh_agent.UsageLimitExceeded`
    when a usage limit ended it), unless ``raise_on_error`` is False; a
    ``blocked`` or ``aborted`` turn is an outcome and is returned."""
    return await run_with(agent, message, output_type, options)


async def run_with(
    agent: Agent,
    message: RunPrompt,
    output_type: type[BaseModel] | None,
    options: OutputRunOptions,
) -> RunResult[Any]:
    """The run every entry point makes (:func:`run`, ``run_sync``, ``SyncAgent.run``):
    one signature without overloads, the options as one value."""
    unknown = unknown_options(options)
    if unknown:
        raise TypeError(f"run() got unexpected keyword arguments: {', '.join(unknown)}")
    prompt = user_prompt(message, "run")
    corrections = options.get("output_corrections", DEFAULT_OUTPUT_CORRECTIONS)
    collector = (
        None if output_type is None else OutputCollector(output_type, corrections=corrections)
    )
    start = agent.session.seq
    with _overrides(agent, options.get("settings"), options.get("instructions"), collector):
        agent.followup(prompt)
        await agent.when_idle()
    return _summarize(agent, start, options.get("raise_on_error", True), collector, prompt.id)


async def run_retry(agent: Agent, *, raise_on_error: bool = True) -> RunResult:
    """Run the failed last turn again (:meth:`~dsh_agent.AgentLoop.retry`), wait until
    ``agent`` is idle and summarize the interval as :func:`run` does."""
    return await run_verb(agent, agent.retry, raise_on_error=raise_on_error)


async def run_verb(
    agent: Agent, verb: Callable[[], Awaitable[None] | None], *, raise_on_error: bool = True
) -> RunResult:
    """Call ``verb`` (one of ``agent``'s that starts or resumes a turn: ``retry``,
    ``regenerate``, an ``approve``; awaited when async), wait until ``agent`` is idle
    and summarize the interval as :func:`run` does."""
    start = agent.session.seq
    started = verb()
    if started is not None:
        await started
    await agent.when_idle()
    return _summarize(agent, start, raise_on_error, None)


def _summarize(
    agent: Agent,
    start: int,
    raise_on_error: bool,
    collector: OutputCollector[Any] | None,
    message_id: MessageId | None = None,
) -> RunResult[Any]:
    events = tuple(agent.session.events[start:])
    end = _last_turn_end(events)
    reason = None if end is None else end.data.reason
    result: RunResult[Any] = RunResult(
        final_response=_final_response(events),
        finish_reason=None if reason is None else reason.kind,
        events=events,
        failure=reason.error if isinstance(reason, ErrorReason) else None,
        message_id=message_id,
        _answer=None if collector is None else _answer(agent, collector),
    )
    if raise_on_error and result.failure is not None:
        limited = result.failure.code == USAGE_LIMIT_EXCEEDED
        raise (UsageLimitExceeded if limited else TurnFailed)(result.failure, result)
    if collector is not None and agent.session.open_turn is None:
        collector.result()  # a run whose turn ended without a valid answer raises here
    return result


def _answer(agent: Agent, collector: OutputCollector[Any]) -> Callable[[], Any]:
    """What the result's ``output`` reads: the collector's answer, or, while the run's
    turn waits for approval with no answer yet, :class:`OutputPendingError`."""
    waiting = agent.session.open_turn

    def answer() -> Any:
        session = agent.session
        if collector.output is None and waiting is not None and session.open_turn == waiting:
            calls = [pending.call_id for pending in agent.pending_approvals]
            assert collector.output_type is not None
            raise OutputPendingError(collector.output_type, waiting, calls)
        return collector.result()

    return answer


def _overrides(
    agent: Agent,
    settings: ModelSettings | None,
    instructions: str | None,
    collector: OutputCollector[Any] | None,
) -> AbstractContextManager[None]:
    if settings is None and instructions is None and collector is None:
        return nullcontext()
    if not isinstance(agent, RequestOverridable):
        raise TypeError(
            f"{type(agent).__name__} takes no per-run settings, instructions or "
            "output_type (AgentLoop does)"
        )
    tools = () if collector is None else (collector.tool,)
    return agent.request_overrides(settings, tools, instructions=instructions)


def _final_response(events: Sequence[SessionEvent]) -> str | None:
    for event in reversed(events):
        if isinstance(event, AssistantMessageEvent):
            texts = [b.text for b in event.data.message.content if isinstance(b, TextBlock)]
            if texts:
                return "".join(texts)
    return None


def _last_turn_end(events: Sequence[SessionEvent]) -> TurnEndEvent | None:
    for event in reversed(events):
        if isinstance(event, TurnEndEvent):
            return event
    return None


__all__ = [
    "RequestOverridable",
    "run",
    "run_retry",
    "run_verb",
    "run_with",
]
