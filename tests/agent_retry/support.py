"""Helpers of the retry tests: replies in the OpenAI chat-completions wire shape, an
agent over the real adapter, and what the log says about retries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from providers.frames import CHAT_DONE, chat_chunk
from providers.http_stub import Reply, StubServer, json_reply, sse_reply

from dsh_agent import AgentLoop, RetryPolicy, reconstruct_requests
from dsh_llm import create_user_message
from dsh_llm._messages import UserMessage
from dsh_llm._stream import FinishChunk
from dsh_llm.providers import OpenAIChatAdapter
from dsh_session import (
    LlmRetryData,
    LlmRetryEvent,
    LlmRetryStartedData,
    LlmRetryStartedEvent,
    Session,
    SessionEvent,
)

FAST = RetryPolicy(max_retries=3, initial_delay_ms=1, max_delay_ms=20, jitter_ratio=0)
"""Tiny delays with no jitter: retry n waits 2**(n-1) ms (1, 2, 4)."""


def answer(text: str) -> Reply:
    return sse_reply([chat_chunk({"content": text}, finish_reason="stop"), CHAT_DONE])


def server_error(status: int = 500, **headers: str) -> Reply:
    return json_reply(
        status,
        {"error": {"message": f"scripted {status}", "type": "server_error"}},
        headers=headers,
    )


def adapter_for(url: str, **options: Any) -> OpenAIChatAdapter:
    return OpenAIChatAdapter(base_url=f"{url}/v1", api_key="k", **options)


def make_agent(
    url: str,
    *,
    retry: RetryPolicy | None = FAST,
    session: Session | None = None,
    **adapter_options: Any,
) -> AgentLoop:
    return AgentLoop(
        session=session or Session.create(),
        adapter=adapter_for(url, **adapter_options),
        provider="openai",
        model="served-model",
        retry=retry,
        check_requests=True,
    )


def prompt(text: str = "hello") -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def retries(events: Sequence[SessionEvent]) -> list[LlmRetryData]:
    return [event.data for event in events if isinstance(event, LlmRetryEvent)]


def started(events: Sequence[SessionEvent]) -> list[LlmRetryStartedData]:
    return [event.data for event in events if isinstance(event, LlmRetryStartedEvent)]


async def assert_log_rebuilds_the_wire_requests(agent: AgentLoop, stub: StubServer) -> None:
    """The requests rebuilt from the log alone, sent again through a fresh adapter, put
    on the wire exactly the bodies the server received live, failed attempts included."""
    live = list(stub.bodies)
    rebuilt = reconstruct_requests(agent.session.events)
    assert len(rebuilt) == len(live)
    replay = adapter_for(stub.url)
    for request in rebuilt:
        stub.script(server_error(400))
        chunks = [chunk async for chunk in replay.stream(request)]
        assert isinstance(chunks[-1], FinishChunk)
    assert stub.bodies[len(live) :] == live
