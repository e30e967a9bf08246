"""End to end: AgentLoop + a provider adapter + its official client + a local server
+ a tool, with every live request checked against its reconstruction from the log.

The model asks for a tool, the loop runs it, and the second request must carry the
tool result and the provider's replay state (DeepSeek's reasoning, Anthropic's
signed thinking) exactly as a real provider requires.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_agent import AgentLoop, Tool, reconstruct_requests, run, tool
from dsh_llm import FinishChunk, ModelAdapter, create_user_message
from dsh_llm.providers import (
    AnthropicAdapter,
    GeminiAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
)
from dsh_session import Session
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore
from providers.frames import (
    CHAT_DONE,
    block_delta,
    block_start,
    block_stop,
    chat_chunk,
    chat_usage,
    message_end,
    message_start,
    responses_call,
    responses_completed,
    responses_created,
    responses_item_added,
    responses_item_done,
    responses_reasoning,
    responses_summary_delta,
    responses_text_reply,
    responses_usage,
    text_reply,
)
from providers.gemini_frames import gemini_chunk, gemini_text_reply, gemini_usage
from providers.http_stub import StubServer, json_reply, sse_reply


def weather_tool(cities_asked: list[str]) -> Tool:
    @tool
    async def weather(city: str) -> str:
        """The current weather in a city."""
        cities_asked.append(city)
        return f"18°C and clear in {city}"

    return weather


async def run_weather_question(
    adapter: ModelAdapter, *, provider: str, model: str
) -> tuple[AgentLoop, str | None]:
    cities_asked: list[str] = []
    agent = AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider=provider,
        model=model,
        system="Answer briefly.",
        tools=[weather_tool(cities_asked)],
        check_requests=True,
    )
    result = await run(
        agent, create_user_message(content="Weather in Paris?", source={"kind": "user"})
    )
    assert result.finish_reason == "completed"
    assert cities_asked == ["Paris"]
    return agent, result.final_response


async def test_deepseek_tool_round_trip(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                chat_chunk({"role": "assistant", "reasoning_content": "Need the weather tool."}),
                chat_chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_w",
                                "type": "function",
                                "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                            }
                        ]
                    }
                ),
                chat_chunk({}, finish_reason="tool_calls"),
                chat_chunk(usage=chat_usage(30, 12, prompt_cache_hit_tokens=0)),
                CHAT_DONE,
            ]
        ),
        sse_reply([chat_chunk({"content": "18°C and clear."}, finish_reason="stop"), CHAT_DONE]),
    )
    adapter = OpenAIChatAdapter(
        base_url=f"{stub.url}/v1", api_key="k", provider="deepseek", max_retries=0
    )

    agent, answer = await run_weather_question(adapter, provider="deepseek", model="deepseek-chat")

    assert answer == "18°C and clear."
    first, second = stub.bodies
    assert first["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert [tool["function"]["name"] for tool in first["tools"]] == ["weather"]
    assert second["messages"][2:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_w",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                }
            ],
            "reasoning_content": "Need the weather tool.",
        },
        {"role": "tool", "tool_call_id": "call_w", "content": "18°C and clear in Paris"},
    ]
    await assert_log_rebuilds_the_wire_requests(agent, adapter, stub)


async def test_anthropic_thinking_tool_round_trip(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                message_start(),
                block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
                block_delta(0, {"type": "thinking_delta", "thinking": "Need the weather tool."}),
                block_delta(0, {"type": "signature_delta", "signature": "sig-w1"}),
                block_stop(0),
                block_start(
                    1, {"type": "tool_use", "id": "toolu_w", "name": "weather", "input": {}}
                ),
                block_delta(1, {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'}),
                block_stop(1),
                *message_end("tool_use"),
            ]
        ),
        sse_reply(text_reply("18°C and clear.")),
    )
    adapter = AnthropicAdapter(
        base_url=stub.url,
        api_key="k",
        max_retries=0,
        thinking={"type": "enabled", "budget_tokens": 1024},
    )

    agent, answer = await run_weather_question(adapter, provider="anthropic", model="claude-test")

    assert answer == "18°C and clear."
    second = stub.bodies[1]
    assert second["system"] == "Answer briefly."
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Need the weather tool.", "signature": "sig-w1"},
                {
                    "type": "tool_use",
                    "id": "toolu_w",
                    "name": "weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_w",
                    "is_error": False,
                    "content": [{"type": "text", "text": "18°C and clear in Paris"}],
                }
            ],
        },
    ]
    await assert_log_rebuilds_the_wire_requests(agent, adapter, stub)


async def test_openai_responses_encrypted_reasoning_tool_round_trip(stub: StubServer) -> None:
    call = responses_call("call_w", "weather", '{"city": "Paris"}')
    stub.script(
        sse_reply(
            [
                responses_created(),
                responses_item_added(0, responses_reasoning("rs_w", [])),
                responses_summary_delta(0, 0, "Need the weather tool.", item_id="rs_w"),
                responses_item_done(
                    0,
                    responses_reasoning("rs_w", ["Need the weather tool."], encrypted="gAAAA-w"),
                ),
                responses_item_added(1, {**call, "arguments": "", "status": "in_progress"}),
                responses_item_done(1, call),
                responses_completed(responses_usage(30, 12, reasoning=8)),
            ]
        ),
        sse_reply(responses_text_reply("18°C and clear.")),
    )
    adapter = OpenAIResponsesAdapter(base_url=f"{stub.url}/v1", api_key="k", max_retries=0)

    agent, answer = await run_weather_question(adapter, provider="openai", model="gpt-test")

    assert answer == "18°C and clear."
    second = stub.bodies[1]
    assert (second["instructions"], second["store"]) == ("Answer briefly.", False)
    assert second["input"][1:] == [
        {
            "type": "reasoning",
            "id": "rs_w",
            "summary": [{"type": "summary_text", "text": "Need the weather tool."}],
            "encrypted_content": "gAAAA-w",
        },
        {
            "type": "function_call",
            "call_id": "call_w",
            "name": "weather",
            "arguments": '{"city": "Paris"}',
        },
        {"type": "function_call_output", "call_id": "call_w", "output": "18°C and clear in Paris"},
    ]
    await assert_log_rebuilds_the_wire_requests(agent, adapter, stub)


async def test_gemini_thinking_tool_round_trip(stub: StubServer) -> None:
    stub.script(
        sse_reply(
            [
                gemini_chunk({"text": "Need the weather tool.", "thought": True}),
                gemini_chunk(
                    {
                        "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                        "thoughtSignature": "c2lnLXcx",
                    },
                    finish_reason="STOP",
                    usage=gemini_usage(30, 12, thoughtsTokenCount=5),
                ),
            ]
        ),
        sse_reply(gemini_text_reply("18°C and clear.")),
    )
    adapter = GeminiAdapter(base_url=stub.url, api_key="k", thinking={"include_thoughts": True})

    agent, answer = await run_weather_question(adapter, provider="gemini", model="gemini-test")

    assert answer == "18°C and clear."
    second = stub.bodies[1]
    assert second["systemInstruction"] == {"parts": [{"text": "Answer briefly."}]}
    assert second["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "Need the weather tool.", "thought": True},
                {
                    "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                    "thoughtSignature": "c2lnLXcx",
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "weather",
                        "response": {"output": "18°C and clear in Paris"},
                    }
                }
            ],
        },
    ]
    await assert_log_rebuilds_the_wire_requests(agent, adapter, stub)


@pytest.mark.parametrize("backend", ["jsonl", "sqlite"])
async def test_an_emoji_split_across_deltas_is_stored_and_read_back(
    stub: StubServer, tmp_path: Path, backend: str
) -> None:
    stub.script(
        sse_reply(
            [
                chat_chunk({"content": "Sunny \ud83d"}),
                chat_chunk({"content": "\ude00 today"}, finish_reason="stop"),
                CHAT_DONE,
            ]
        )
    )
    adapter = OpenAIChatAdapter(base_url=f"{stub.url}/v1", api_key="k", max_retries=0)
    store: SessionStore = (
        JsonlSessionStore(tmp_path) if backend == "jsonl" else SqliteSessionStore(tmp_path / "s.db")
    )
    async with store:
        agent = AgentLoop(session=Session.create(), adapter=adapter, provider="openai", model="m")
        store.attach(agent.session)
        result = await run(agent, create_user_message(content="Weather?", source={"kind": "user"}))
        await store.flush(agent.session)
        store.detach(agent.session)
        loaded = await store.load(agent.session.header.id)

    assert result.final_response == "Sunny \U0001f600 today"
    assert loaded.derive_messages() == agent.session.derive_messages()


async def assert_log_rebuilds_the_wire_requests(
    agent: AgentLoop, adapter: ModelAdapter, stub: StubServer
) -> None:
    """Sending the requests rebuilt from the log alone puts the very same bodies on
    the wire as the live run did."""
    live_bodies = list(stub.bodies)
    rebuilt = reconstruct_requests(agent.session.events)
    assert len(rebuilt) == len(live_bodies)
    for request in rebuilt:
        # Only the request bodies matter here; the server turns the calls away.
        stub.script(json_reply(503, {"error": {"message": "replay only", "type": "api_error"}}))
        chunks = [item async for item in adapter.stream(request)]
        assert isinstance(chunks[-1], FinishChunk)
    assert stub.bodies[len(live_bodies) :] == live_bodies
