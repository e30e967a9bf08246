"""Agent factories whose scripted models stream slowly, chunk by chunk (one word per
chunk, ``DELAY`` seconds apart), so a test sees a reply's deltas before its commit.
Importable by ``dsh serve`` child processes (``tests.web.live_agents:<factory>``)."""

from __future__ import annotations

from typing import Any

from dsh_agent import AgentLoop, tool
from dsh_agent.retry import RetryPolicy
from dsh_llm import GenerateRequest, UserMessage
from dsh_llm._failure import LlmFailure
from dsh_llm._stream import BlockStartChunk, ErrorFinish, FinishChunk, TextDeltaChunk
from dsh_llm.testing import FunctionAdapter, Reply, Response, reply
from dsh_session import Session
from dsh_session.stores import SessionStore

DELAY = 0.04
"""Seconds before each chunk."""

REPLY = "one two three four five six seven eight nine ten eleven twelve"
"""What :func:`streaming` answers to every prompt."""


def _loop(session: Session, store: SessionStore, adapter: FunctionAdapter, **kw: Any) -> AgentLoop:
    return AgentLoop(
        session=session, adapter=adapter, store=store, provider="test", model="scripted", **kw
    )


def streaming(session: Session, store: SessionStore) -> AgentLoop:
    """Answers :data:`REPLY`, word by word."""
    return _loop(session, store, FunctionAdapter(lambda request: REPLY, delay=DELAY))


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def _tool_then_answer(request: GenerateRequest) -> str | Reply:
    if isinstance(request.messages[-1], UserMessage):
        return reply(text="let me look", tool_calls=[{"name": "lookup", "arguments": {"key": "k"}}])
    return REPLY


def tool_then_answer(session: Session, store: SessionStore) -> AgentLoop:
    """Step 1 calls ``lookup`` (at once); step 2 streams :data:`REPLY` slowly."""
    adapter = FunctionAdapter(_tool_then_answer, delay=DELAY)
    return _loop(session, store, adapter, tools=[lookup])


FAILED_TEXT = "this attempt will fail "


class _FailOnce:
    """The first attempt streams :data:`FAILED_TEXT` then fails with a retryable
    ``SERVER`` error; every later one answers :data:`REPLY`."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: GenerateRequest) -> Response:
        self.calls += 1
        if self.calls > 1:
            return REPLY
        words = FAILED_TEXT.split(" ")[:-1]
        failure = LlmFailure(message="the server is overloaded", code="SERVER")
        return [
            BlockStartChunk(index=0, block_type="text"),
            *(TextDeltaChunk(index=0, text=f"{word} ") for word in words),
            FinishChunk(reason=ErrorFinish(failure=failure)),
        ]


def fails_then_answers(session: Session, store: SessionStore) -> AgentLoop:
    """A failed attempt, retried after 50 ms; the retry answers :data:`REPLY`."""
    policy = RetryPolicy(max_retries=2, initial_delay_ms=50, max_delay_ms=50, jitter_ratio=0)
    adapter = FunctionAdapter(_FailOnce(), delay=DELAY)
    return _loop(session, store, adapter, retry=policy)


REASONING = "first I think about it and then I answer"


def reasons(session: Session, store: SessionStore) -> AgentLoop:
    """Streams :data:`REASONING`, then :data:`REPLY`, word by word."""
    adapter = FunctionAdapter(lambda request: reply(text=REPLY, reasoning=REASONING), delay=DELAY)
    return _loop(session, store, adapter)
