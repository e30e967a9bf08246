"""The run options, written once (``RunOptions``, ``OutputRunOptions``), type-check alike
at the three entry points, checked by mypy with the suite (and by pyright on this file):
without ``output_type`` a run is ``RunResult[None]``, with one it is
``RunResult[Model]``; ``output_corrections`` needs an ``output_type``; an unknown option is
an error. The calls in ``_rejected`` are never run: each ``type: ignore`` must be needed
(mypy's ``warn_unused_ignores``), so each line is a type error."""

from __future__ import annotations

import asyncio
from typing import Any, assert_type

import pytest
from pydantic import BaseModel

from dsh_agent import (
    AgentLoop,
    ModelSettings,
    OutputRunOptions,
    RunOptions,
    RunResult,
    SyncAgent,
    run,
    run_sync,
)
from dsh_llm import (
    AssistantMessage,
    TextBlock,
    UserMessage,
    create_assistant_message,
    create_user_message,
)
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


class Answer(BaseModel):
    value: int


def _agent(*responses: Any) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter(list(responses)),
        provider="test",
        model="scripted",
    )


def _ask() -> UserMessage:
    return create_user_message(content="go", source={"kind": "user"})


def _assistant() -> AssistantMessage:
    return create_assistant_message(content="hi", source={"provider": "p", "model": "m"})


def _answer(value: int) -> Any:
    return reply(tool_calls=[{"name": "final_result", "arguments": {"value": value}}])


def test_run_is_typed_by_its_output_type() -> None:
    async def main() -> None:
        plain = await run(_agent("hi"), _ask(), settings=ModelSettings(temperature=0))
        assert_type(plain, RunResult[None])
        typed = await run(_agent(_answer(1)), _ask(), output_type=Answer, output_corrections=0)
        assert_type(typed, RunResult[Answer])
        assert_type(typed.output, Answer)
        assert typed.output == Answer(value=1)

    asyncio.run(main())


def test_run_sync_is_typed_by_its_output_type() -> None:
    plain = run_sync(_agent("hi"), _ask(), raise_on_error=False)
    assert_type(plain, RunResult[None])
    typed = run_sync(lambda: _agent(_answer(2)), _ask(), output_type=Answer)
    assert_type(typed, RunResult[Answer])
    assert typed.output == Answer(value=2)


def test_sync_agent_run_is_typed_by_its_output_type() -> None:
    with SyncAgent(lambda: _agent("hi", _answer(3))) as chat:
        plain = chat.run(_ask(), settings=None)
        assert_type(plain, RunResult[None])
        typed = chat.run(_ask(), output_type=Answer, raise_on_error=True)
        assert_type(typed, RunResult[Answer])
    assert typed.output == Answer(value=3)


def test_a_string_or_content_blocks_is_a_prompt_at_every_entry_point() -> None:
    async def main() -> None:
        plain = await run(_agent("hi"), "x")
        assert_type(plain, RunResult[None])
        typed = await run(_agent(_answer(5)), "x", output_type=Answer)
        assert_type(typed, RunResult[Answer])
        assert typed.output == Answer(value=5)
        blocks = await run(_agent("hi"), [TextBlock(text="x"), {"type": "text", "text": "y"}])
        assert_type(blocks, RunResult[None])

    asyncio.run(main())
    assert_type(run_sync(_agent("hi"), "x"), RunResult[None])
    assert_type(run_sync(_agent(_answer(6)), "x", output_type=Answer), RunResult[Answer])
    with SyncAgent(lambda: _agent("hi", _answer(7))) as chat:
        assert_type(chat.run("x"), RunResult[None])
        assert_type(chat.run("x", output_type=Answer), RunResult[Answer])
    assert_type(create_user_message("x"), UserMessage)


def test_options_pass_through_as_one_value() -> None:
    options: RunOptions = {"raise_on_error": False}
    with_output: OutputRunOptions = {"output_corrections": 0, **options}
    assert_type(run_sync(_agent("hi"), _ask(), **options), RunResult[None])
    typed = run_sync(_agent(_answer(4)), _ask(), output_type=Answer, **with_output)
    assert_type(typed, RunResult[Answer])


def test_an_unknown_option_is_refused_at_run_time_too() -> None:
    with pytest.raises(TypeError, match="retries"):
        run_sync(_agent("hi"), _ask(), **{"retries": 3})  # type: ignore[call-overload]


async def _rejected(agent: AgentLoop, chat: SyncAgent) -> None:
    await run(agent, _ask(), output_corrections=1)  # type: ignore[call-overload]
    await run(agent, _ask(), temperature=0)  # type: ignore[call-overload]
    run_sync(agent, _ask(), output_corrections=1)  # type: ignore[call-overload]
    run_sync(agent, _ask(), temperature=0)  # type: ignore[call-overload]
    chat.run(_ask(), output_corrections=1)  # type: ignore[call-overload]
    chat.run(_ask(), temperature=0)  # type: ignore[call-overload]
    await run(agent, 42)  # type: ignore[call-overload]
    await run(agent, _assistant())  # type: ignore[call-overload]
    chat.run(b"x")  # type: ignore[arg-type]
