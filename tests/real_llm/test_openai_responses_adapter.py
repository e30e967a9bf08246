"""OpenAIResponsesAdapter against llama.cpp's real server (its ``/v1/responses``, which
names output items by id and numbers none) and the scripted tiny model."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_agent import AgentLoop, reconstruct_requests, run, tool
from dsh_llm import (
    BlockEndChunk,
    FinishChunk,
    GenerateRequest,
    StopFinish,
    StreamChunk,
    TextBlock,
    TextDeltaChunk,
    ToolCallBlock,
    ToolCallDeltaChunk,
    ToolCallsFinish,
    ToolSchema,
    UsageChunk,
    create_user_message,
)
from dsh_llm.providers import OpenAIResponsesAdapter
from dsh_session import Session
from real_llm.server import LlamaServer
from real_llm.tiny_model import AFTER_TOOL_REPLY, PLAIN_REPLY

ADD = ToolSchema(
    name="add",
    description="Add two integers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


@pytest.fixture
def responses(llama_server: LlamaServer) -> OpenAIResponsesAdapter:
    return OpenAIResponsesAdapter(
        provider="llamacpp", base_url=llama_server.base_url, api_key="none", max_retries=0
    )


async def _stream(adapter: OpenAIResponsesAdapter, text: str, **options: Any) -> list[StreamChunk]:
    request = GenerateRequest(
        provider="llamacpp",
        model="tiny",
        messages=(create_user_message(content=text, source={"kind": "user"}),),
        **options,
    )
    return [chunk async for chunk in adapter.stream(request)]


async def test_text_streams_in_pieces_and_stops(responses: OpenAIResponsesAdapter) -> None:
    chunks = await _stream(responses, "hi")

    deltas = [chunk.text for chunk in chunks if isinstance(chunk, TextDeltaChunk)]
    assert len(deltas) > 1
    assert "".join(deltas) == PLAIN_REPLY
    ends = [chunk.block for chunk in chunks if isinstance(chunk, BlockEndChunk)]
    assert ends == [TextBlock(text=PLAIN_REPLY)]
    (usage,) = [chunk for chunk in chunks if isinstance(chunk, UsageChunk)]
    assert usage.usage.output_tokens == len(deltas) + 1  # + the end-of-turn token
    assert chunks[-1] == FinishChunk(reason=StopFinish())


async def test_a_tool_call_streams_as_argument_deltas(responses: OpenAIResponsesAdapter) -> None:
    chunks = await _stream(responses, "please calc 2+3", tools=(ADD,))

    deltas = [chunk for chunk in chunks if isinstance(chunk, ToolCallDeltaChunk)]
    assert len(deltas) > 1
    assert "".join(delta.arguments_delta for delta in deltas) == '{"a": 2, "b": 3}'
    (end,) = [chunk.block for chunk in chunks if isinstance(chunk, BlockEndChunk)]
    assert isinstance(end, ToolCallBlock)
    assert (end.name, end.arguments, end.call_id) == ("add", '{"a": 2, "b": 3}', deltas[0].call_id)
    assert chunks[-1] == FinishChunk(reason=ToolCallsFinish())


async def test_an_agent_tool_round_trip_over_responses(
    responses: OpenAIResponsesAdapter,
) -> None:
    calls: list[tuple[int, int]] = []

    @tool
    async def add(a: int, b: int) -> str:
        """Add two integers."""
        calls.append((a, b))
        return str(a + b)

    agent = AgentLoop(
        session=Session.create(),
        adapter=responses,
        provider="llamacpp",
        model="tiny",
        system="Answer briefly.",
        tools=[add],
        check_requests=True,
    )

    result = await run(agent, create_user_message(content="please calc 2+3"))
    await agent.aclose()

    assert (result.finish_reason, result.final_response) == ("completed", AFTER_TOOL_REPLY)
    assert calls == [(2, 3)]
    assert len(reconstruct_requests(agent.session.events)) == 2
