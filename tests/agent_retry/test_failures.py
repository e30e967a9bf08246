"""Failures are values and exceptions: ``RunResult.failure``, ``TurnFailed`` from
``run()`` (never for ``blocked`` or ``aborted``), and every exception from an adapter,
a tool or a pre-step handler logged with its traceback, its text in the failure."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from dsh_agent import (
    AgentLoop,
    AssistantStarted,
    CallNext,
    PreStep,
    PreStepDecision,
    Reject,
    run,
    tool,
)
from dsh_agent.errors import TurnFailed
from dsh_llm import create_user_message
from dsh_llm._failure import LlmFailure
from dsh_llm._messages import UserMessage
from dsh_llm._request import GenerateRequest
from dsh_llm._stream import StreamChunk
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, ToolResultEvent


class _ExplodingAdapter:
    def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        raise RuntimeError("the adapter has a bug")


def _agent(adapter: object, **options: object) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=adapter,  # type: ignore[arg-type]
        provider="p",
        model="m",
        retry=None,
        **options,  # type: ignore[arg-type]
    )


def _prompt() -> UserMessage:
    return create_user_message(content="go", source={"kind": "user"})


def _tracebacks(caplog: pytest.LogCaptureFixture, fragment: str) -> list[logging.LogRecord]:
    return [
        record
        for record in caplog.records
        if record.name == "dsh_agent"
        and record.exc_info is not None
        and fragment in str(record.exc_info[1])
    ]


async def test_an_adapter_exception_is_logged_with_its_traceback_and_kept_in_the_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = _agent(_ExplodingAdapter())

    with pytest.raises(TurnFailed) as raised:
        await run(agent, _prompt())

    assert raised.value.failure.message == "RuntimeError: the adapter has a bug"
    assert raised.value.result.failure == raised.value.failure
    assert _tracebacks(caplog, "the adapter has a bug")


async def test_a_tool_exception_is_logged_with_its_traceback_and_the_turn_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @tool
    async def explode() -> str:
        """Fail."""
        raise ValueError("the tool broke")

    adapter = ScriptedAdapter([reply(tool_calls=[{"name": "explode"}]), "recovered"])
    agent = _agent(adapter, tools=[explode])

    result = await run(agent, _prompt())

    assert result.final_response == "recovered" and result.failure is None
    [outcome] = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert "ValueError: the tool broke" in str(outcome.data.message.content)
    assert _tracebacks(caplog, "the tool broke")


async def test_a_pre_step_exception_is_logged_and_ends_the_turn_in_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = _agent(ScriptedAdapter(["never"]))

    async def broken(step: PreStep, call_next: CallNext) -> PreStepDecision:
        raise KeyError("handler state")

    agent.on_pre_step(broken)

    result = await run(agent, _prompt(), raise_on_error=False)

    assert result.failure is not None and result.failure.code == "UNKNOWN"
    assert "handler state" in result.failure.message
    assert _tracebacks(caplog, "handler state")


async def test_blocked_and_aborted_turns_are_outcomes_not_errors() -> None:
    blocked = _agent(ScriptedAdapter(["never"]))

    async def refuse(step: PreStep, call_next: CallNext) -> PreStepDecision:
        return Reject()

    blocked.on_pre_step(refuse)
    result = await run(blocked, _prompt())
    assert (result.finish_reason, result.failure) == ("blocked", None)

    aborted = _agent(ScriptedAdapter(["never"], delay=60))
    aborted.subscribe(
        lambda note: aborted.cancel("user") if isinstance(note, AssistantStarted) else None
    )
    result = await run(aborted, _prompt())
    assert (result.finish_reason, result.failure) == ("aborted", None)


async def test_the_failure_is_that_of_the_last_turn_of_the_interval() -> None:
    failure = LlmFailure(message="quota", code="QUOTA", status=429)
    agent = _agent(ScriptedAdapter([failure]))

    result = await run(agent, _prompt(), raise_on_error=False)

    assert result.failure == failure and result.finish_reason == "error"
