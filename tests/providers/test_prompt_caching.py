"""Prompt caching controls end to end: ``ModelSettings(prompt_cache=...)`` goes into the
logged request header, each adapter puts it on the wire in its API's documented form
(OpenAI ``prompt_cache_key``/``prompt_cache_retention``, Anthropic ``cache_control``
markers), the cached-token counts of the response land in the assistant message's
usage, and the requests rebuilt from the log send the very same bodies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from dsh_agent import AgentLoop, ModelSettings, reconstruct_requests, run, tool, usage_of
from dsh_llm import (
    GenerateRequest,
    PromptCache,
    ReasoningBlock,
    TokenUsage,
    create_assistant_message,
    create_user_message,
)
from dsh_llm.failure_codes import SERVER
from dsh_llm.providers import AnthropicAdapter, FallbackAdapter, OpenAIChatAdapter
from dsh_llm.providers._anthropic_wire import messages_body
from dsh_llm.providers._openai_wire import chat_body
from dsh_session import Session
from dsh_session.events import AssistantMessageEvent, RequestHeaderEvent
from providers.frames import (
    CHAT_DONE,
    block_delta,
    block_start,
    block_stop,
    chat_chunk,
    chat_usage,
    message_end,
    message_start,
    text_reply,
)
from providers.http_stub import StubServer, json_reply, sse_reply
from providers.test_agent_with_real_providers import assert_log_rebuilds_the_wire_requests


@tool
async def weather(city: str) -> str:
    """The current weather in a city."""
    return f"18°C and clear in {city}"


async def ask_weather(
    adapter: Any, *, provider: str, loop_cache: PromptCache, run_cache: PromptCache | None = None
) -> AgentLoop:
    agent = AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider=provider,
        model="m",
        system="Answer briefly.",
        tools=[weather],
        model_settings=ModelSettings(prompt_cache=loop_cache),
        check_requests=True,
    )
    settings = None if run_cache is None else ModelSettings(prompt_cache=run_cache)
    result = await run(agent, "Weather in Paris?", settings=settings)
    assert result.finish_reason == "completed"
    return agent


def usages(agent: AgentLoop) -> list[TokenUsage | None]:
    return [e.data.usage for e in agent.session.events if isinstance(e, AssistantMessageEvent)]


def markers(body: object) -> list[Any]:
    """Every ``cache_control`` value in a wire body, in document order."""
    found: list[Any] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "cache_control":
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body)
    return found


def openai_tool_call_reply(*, cached: int) -> Any:
    return sse_reply(
        [
            chat_chunk(
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_w",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                }
            ),
            chat_chunk({}, finish_reason="tool_calls"),
            chat_chunk(usage=chat_usage(1200, 9, prompt_tokens_details={"cached_tokens": cached})),
            CHAT_DONE,
        ]
    )


async def test_openai_sends_the_key_and_retention_and_reports_cached_tokens(
    stub: StubServer,
) -> None:
    stub.script(
        openai_tool_call_reply(cached=0),
        sse_reply(
            [
                chat_chunk({"content": "18°C and clear."}, finish_reason="stop"),
                chat_chunk(
                    usage=chat_usage(1250, 5, prompt_tokens_details={"cached_tokens": 1152})
                ),
                CHAT_DONE,
            ]
        ),
    )
    adapter = OpenAIChatAdapter(base_url=f"{stub.url}/v1", api_key="k", max_retries=0)

    agent = await ask_weather(
        adapter, provider="openai", loop_cache=PromptCache(key="user-42", retention="long")
    )

    for body in stub.bodies:
        assert body["prompt_cache_key"] == "user-42"
        assert body["prompt_cache_retention"] == "24h"
        assert markers(body) == []  # breakpoints are Anthropic's
    first, second = usages(agent)
    assert first == TokenUsage(input_tokens=1200, output_tokens=9, cache_read_tokens=0)
    assert second == TokenUsage(input_tokens=98, output_tokens=5, cache_read_tokens=1152)
    assert usage_of(agent.session.events).cache_read_tokens == 1152
    await assert_log_rebuilds_the_wire_requests(agent, adapter, stub)


async def test_openai_short_retention_is_in_memory_and_no_cache_sends_nothing(
    stub: StubServer,
) -> None:
    request = GenerateRequest(
        provider="openai",
        model="m",
        messages=(create_user_message(content="hi", source={"kind": "user"}),),
        prompt_cache=PromptCache(retention="short"),
    )
    options = chat_body(request, max_tokens_field="max_tokens").options
    assert options == {"prompt_cache_retention": "in_memory"}
    plain = GenerateRequest(provider="openai", model="m", messages=request.messages)
    assert chat_body(plain, max_tokens_field="max_tokens").options == {}


async def test_anthropic_marks_tools_system_and_history_and_reports_cache_use(
    stub: StubServer,
) -> None:
    stub.script(
        sse_reply(
            [
                message_start(cache_creation_input_tokens=1100, cache_read_input_tokens=0),
                block_start(
                    0, {"type": "tool_use", "id": "toolu_w", "name": "weather", "input": {}}
                ),
                block_delta(0, {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'}),
                block_stop(0),
                *message_end("tool_use"),
            ]
        ),
        sse_reply(
            [
                message_start(
                    input_tokens=40, cache_creation_input_tokens=60, cache_read_input_tokens=1100
                ),
                *text_reply("18°C and clear.")[1:],
            ]
        ),
    )
    adapter = AnthropicAdapter(base_url=stub.url, api_key="k", max_retries=0)

    agent = await ask_weather(adapter, provider="anthropic", loop_cache=PromptCache())

    marker = {"type": "ephemeral"}
    for body in stub.bodies:
        assert body["tools"][-1]["cache_control"] == marker
        assert body["system"] == [
            {"type": "text", "text": "Answer briefly.", "cache_control": marker}
        ]
        assert body["messages"][-1]["content"][-1]["cache_control"] == marker
        assert len(markers(body)) == 3  # the API allows four
        assert "prompt_cache_key" not in body
    assert stub.bodies[1]["messages"][-1]["content"][-1]["type"] == "tool_result"
    first, second = usages(agent)
    assert first is not None and second is not None
    assert (first.cache_write_tokens, first.cache_read_tokens) == (1100, 0)
    assert (second.input_tokens, second.cache_write_tokens, second.cache_read_tokens) == (
        40,
        60,
        1100,
    )
    totals = usage_of(agent.session.events)
    assert (totals.cache_read_tokens, totals.cache_write_tokens) == (1100, 1160)
    await assert_log_rebuilds_the_wire_requests(agent, adapter, stub)


async def test_a_run_override_is_logged_and_rebuilt(stub: StubServer) -> None:
    stub.script(sse_reply(text_reply("Sunny.")))
    adapter = AnthropicAdapter(base_url=stub.url, api_key="k", max_retries=0)
    agent = AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="anthropic",
        model="m",
        system="Answer briefly.",
        model_settings=ModelSettings(prompt_cache=PromptCache(breakpoints=())),
        check_requests=True,
    )
    run_cache = PromptCache(retention="long", breakpoints=("system",))

    await run(agent, "Weather?", settings=ModelSettings(prompt_cache=run_cache))

    (body,) = stub.bodies
    long = {"type": "ephemeral", "ttl": "1h"}
    assert body["system"] == [{"type": "text", "text": "Answer briefly.", "cache_control": long}]
    assert markers(body) == [long]
    headers = [e.data.header for e in agent.session.events if isinstance(e, RequestHeaderEvent)]
    assert headers[-1].config.prompt_cache == run_cache
    logged = [
        json.loads(e.model_dump_json(by_alias=True))["data"]["header"]["config"]
        for e in agent.session.events
        if isinstance(e, RequestHeaderEvent)
    ]
    assert {"retention": "long", "breakpoints": ["system"]} in [c["promptCache"] for c in logged]
    assert [r.prompt_cache for r in reconstruct_requests(agent.session.events)] == [run_cache]
    await assert_log_rebuilds_the_wire_requests(agent, adapter, stub)


def anthropic_body(request: GenerateRequest) -> Any:
    return messages_body(request, default_max_tokens=100, thinking=None)


def test_anthropic_without_breakpoints_or_cache_sends_no_markers() -> None:
    messages = (create_user_message(content="hi", source={"kind": "user"}),)
    for cache in (None, PromptCache(breakpoints=()), PromptCache(key="k", retention="long")):
        request = GenerateRequest(
            provider="anthropic",
            model="m",
            messages=messages,
            system="S",
            prompt_cache=cache,
        )
        body = anthropic_body(request)
        if cache is not None and cache.breakpoints:
            assert markers(body.options) + markers(body.messages) != []
        else:
            assert markers(body.options) + markers(body.messages) == []
            assert body.options["system"] == "S"


def test_the_history_marker_skips_thinking_blocks() -> None:
    """An assistant message last (a prefill) may end in thinking, which cannot carry
    a marker: its last other block does."""
    answer = create_assistant_message(
        content=[{"type": "text", "text": "Let me see."}, ReasoningBlock(text="hmm")],
        source={
            "provider": "anthropic",
            "model": "m",
            "replayState": {
                "format": "anthropic-messages",
                "thinking": [{"type": "thinking", "signature": "sig"}],
            },
        },
    )
    request = GenerateRequest(
        provider="anthropic",
        model="m",
        messages=(create_user_message(content="hi", source={"kind": "user"}), answer),
        prompt_cache=PromptCache(breakpoints=("history",)),
    )
    (last_turn,) = anthropic_body(request).messages[-1:]
    assert last_turn["content"] == [
        {"type": "text", "text": "Let me see.", "cache_control": {"type": "ephemeral"}},
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
    ]


@pytest.mark.parametrize(
    "fields",
    [
        {"breakpoints": ["system", "system"]},
        {"breakpoints": ["messages"]},
        {"retention": "1h"},
        {"key": ""},
    ],
)
def test_bad_cache_settings_are_refused_naming_the_field(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as caught:
        PromptCache.model_validate(fields)
    assert next(iter(fields)) in str(caught.value)


async def test_a_fallback_to_the_other_provider_keeps_the_caching_intent(
    stub: StubServer,
) -> None:
    """One neutral value serves both: the turn that falls back from Anthropic to
    OpenAI sends OpenAI's key and retention, and the log rebuilds both requests."""
    stub.script(json_reply(529, {"type": "error", "error": {"type": "overloaded_error"}}))
    second = StubServer()
    await second.start()
    try:
        second.script(
            sse_reply(
                [
                    chat_chunk({"content": "Sunny."}, finish_reason="stop"),
                    chat_chunk(
                        usage=chat_usage(900, 2, prompt_tokens_details={"cached_tokens": 768})
                    ),
                    CHAT_DONE,
                ]
            )
        )
        anthropic = AnthropicAdapter(base_url=stub.url, api_key="k", max_retries=0, model="c")
        openai = OpenAIChatAdapter(
            base_url=f"{second.url}/v1", api_key="k", max_retries=0, model="g"
        )
        agent = AgentLoop(
            session=Session.create(),
            adapter=FallbackAdapter([anthropic, openai], on=frozenset({SERVER})),
            provider="anthropic",
            model="c",
            system="Answer briefly.",
            model_settings=ModelSettings(prompt_cache=PromptCache(key="u1", retention="long")),
            retry=None,  # straight to the fallback
            check_requests=True,
        )

        result = await run(agent, "Weather?")

        assert result.final_response == "Sunny."
        (first,) = stub.bodies
        assert first["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
        (body,) = second.bodies
        assert (body["prompt_cache_key"], body["prompt_cache_retention"]) == ("u1", "24h")
        assert usages(agent)[-1] == TokenUsage(
            input_tokens=132, output_tokens=2, cache_read_tokens=768
        )
        rebuilt = reconstruct_requests(agent.session.events)
        assert [(r.provider, r.prompt_cache) for r in rebuilt] == [
            ("anthropic", PromptCache(key="u1", retention="long")),
            ("openai", PromptCache(key="u1", retention="long")),
        ]
    finally:
        await second.close()
