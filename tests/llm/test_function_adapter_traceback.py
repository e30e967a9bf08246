"""Issue 34 (small): when the function behind a ``FunctionAdapter`` raises, the call
still ends in ``finish {error}``, and the traceback is logged (logger
``dsh_llm.testing``, with ``exc_info``) as the real adapters log what they could not
handle, so a bug in a test's model function is not reduced to one line."""

from __future__ import annotations

import logging

import pytest

from dsh_llm import ErrorFinish, FinishChunk, GenerateRequest, create_user_message
from dsh_llm.testing import FunctionAdapter, ModelFunction


def _request() -> GenerateRequest:
    hi = create_user_message(content="hi", source={"kind": "user"})
    return GenerateRequest(provider="p", model="m", messages=(hi,))


def broken_sync(request: GenerateRequest) -> str:
    return {"no such key": "x"}["missing"]


async def broken_async(request: GenerateRequest) -> str:
    raise ZeroDivisionError("the model function divided by zero")


@pytest.mark.parametrize(
    ("fn", "kind"), [(broken_sync, KeyError), (broken_async, ZeroDivisionError)]
)
async def test_a_raised_function_is_an_error_finish_with_its_traceback_logged(
    caplog: pytest.LogCaptureFixture, fn: ModelFunction, kind: type[BaseException]
) -> None:
    adapter = FunctionAdapter(fn)
    with caplog.at_level(logging.WARNING):
        chunks = [chunk async for chunk in adapter.stream(_request())]

    [finish] = chunks
    assert isinstance(finish, FinishChunk) and isinstance(finish.reason, ErrorFinish)
    [record] = [r for r in caplog.records if r.name == "dsh_llm.testing"]
    assert record.levelno >= logging.WARNING
    assert record.exc_info is not None and isinstance(record.exc_info[1], kind)
    assert record.exc_info[2] is not None  # the traceback itself, down to the function


async def test_a_returned_exception_is_a_scripted_failure_and_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    adapter = FunctionAdapter(lambda request: RuntimeError("scripted"))
    with caplog.at_level(logging.WARNING):
        chunks = [chunk async for chunk in adapter.stream(_request())]

    [finish] = chunks
    assert isinstance(finish, FinishChunk) and isinstance(finish.reason, ErrorFinish)
    assert [r for r in caplog.records if r.name == "dsh_llm.testing"] == []
