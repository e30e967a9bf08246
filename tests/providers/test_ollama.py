"""``ollama:MODEL``: Ollama through its OpenAI-compatible ``/v1`` endpoint
(docs/decisions/2026-12-06-ollama-path.md), against a local server sending what
Ollama's OpenAI middleware writes: every delta with ``role`` and a ``content`` string
(empty beside tool calls), thinking in ``reasoning``, each tool call whole in one
delta with an id of the form ``call_xxxxxxxx`` and ``finish_reason: "tool_calls"``
(``"stop"`` before Ollama 0.4), the usage in a copy of the last chunk with no
choices, then ``[DONE]``; errors as ``{"error": {"message", "type", "param": null,
"code": null}}``. The shared contract tests run over ``ollama:MODEL`` too
(test_provider_failures.py, test_transport_failures.py, test_split_surrogates.py)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_agent import AgentLoop, run, tool, usage_of
from dsh_llm import (
    BaseUrlError,
    ErrorFinish,
    FinishChunk,
    GenerateRequest,
    create_user_message,
)
from dsh_llm.providers import OpenAIChatAdapter, adapter_for
from dsh_session import Session
from providers.http_stub import StubServer, json_reply, sse_frame, sse_reply

MODEL = "qwen3:8b"


def ollama_chunk(
    delta: dict[str, Any], finish_reason: str | None = None, *, usage: Any = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-123",
        "object": "chat.completion.chunk",
        "created": 1765000000,
        "model": MODEL,
        "system_fingerprint": "fp_ollama",
        "choices": [
            {
                "index": 0,
                "delta": {"role": "assistant", "content": "", **delta},
                "finish_reason": finish_reason,
            }
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def ollama_stream(*chunks: dict[str, Any], prompt: int, completion: int) -> list[bytes]:
    """The chunks, then the usage chunk Ollama derives from the last one, then DONE."""
    usage_chunk = {
        **chunks[-1],
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }
    return [*(sse_frame(chunk) for chunk in chunks), sse_frame(usage_chunk), sse_frame("[DONE]")]


def weather_call(finish_reason: str) -> list[bytes]:
    call = {
        "id": "call_k3v9x2qa",
        "index": 0,
        "type": "function",
        "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
    }
    return ollama_stream(
        ollama_chunk({"reasoning": "The weather tool knows."}),
        ollama_chunk({"tool_calls": [call]}),
        ollama_chunk({}, finish_reason),
        prompt=40,
        completion=18,
    )


@pytest.fixture
def ollama_at(stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> StubServer:
    """The stub as the Ollama server ``OLLAMA_HOST`` names."""
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{stub.port}")
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    return stub


@pytest.mark.parametrize("finish_reason", ["tool_calls", "stop"], ids=["current", "before 0.4"])
async def test_a_tool_round_trip_through_the_model_string(
    ollama_at: StubServer, finish_reason: str
) -> None:
    cities: list[str] = []

    @tool
    async def weather(city: str) -> str:
        """The current weather in a city."""
        cities.append(city)
        return f"18°C in {city}"

    ollama_at.script(
        sse_reply(weather_call(finish_reason)),
        sse_reply(
            ollama_stream(
                ollama_chunk({"content": "18°C and clear."}),
                ollama_chunk({}, "stop"),
                prompt=70,
                completion=6,
            )
        ),
    )
    agent = AgentLoop(
        session=Session.create(), model=f"ollama:{MODEL}", tools=[weather], check_requests=True
    )

    result = await run(agent, create_user_message("Weather in Paris?"))
    await agent.aclose()

    assert (result.finish_reason, result.final_response) == ("completed", "18°C and clear.")
    assert cities == ["Paris"]
    first, second = ollama_at.requests
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer ollama"
    assert first.body["model"] == MODEL
    assert first.body["stream_options"] == {"include_usage": True}
    assert second.body["messages"][1:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_k3v9x2qa",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
                }
            ],
            "reasoning": "The weather tool knows.",  # Ollama reads it back as thinking
        },
        {"role": "tool", "tool_call_id": "call_k3v9x2qa", "content": "18°C in Paris"},
    ]
    spent = usage_of(agent.session.events)
    assert (spent.requests, spent.input_tokens, spent.output_tokens) == (2, 110, 24)


@pytest.mark.parametrize(
    ("status", "message", "kind", "code"),
    [
        (404, 'model "qwen3:8b" not found, try pulling it first', "not_found_error", "HTTP_404"),
        (400, "invalid message format", "invalid_request_error", "INVALID_REQUEST"),
        (500, "llama runner process has terminated: exit status 2", "api_error", "SERVER"),
    ],
)
async def test_ollamas_error_bodies_get_the_shared_codes(
    ollama_at: StubServer, status: int, message: str, kind: str, code: str
) -> None:
    ollama_at.script(
        json_reply(
            status, {"error": {"message": message, "type": kind, "param": None, "code": None}}
        )
    )
    request = GenerateRequest(provider="ollama", model=MODEL, messages=(create_user_message("hi"),))

    chunks = [chunk async for chunk in adapter_for(f"ollama:{MODEL}").stream(request)]

    finish = chunks[-1]
    assert isinstance(finish, FinishChunk) and isinstance(finish.reason, ErrorFinish)
    failure = finish.reason.failure
    assert (failure.code, failure.status) == (code, status)
    assert failure.message == f"HTTP {status}: {message}"


@pytest.mark.parametrize(
    ("host", "base_url"),
    [
        (None, "http://127.0.0.1:11434/v1"),
        ("", "http://127.0.0.1:11434/v1"),
        ("0.0.0.0", "http://0.0.0.0:11434/v1"),
        ("gpu-box", "http://gpu-box:11434/v1"),
        ("10.0.0.7:8080", "http://10.0.0.7:8080/v1"),
        (":9999", "http://127.0.0.1:9999/v1"),
        ("https://ollama.example.com", "https://ollama.example.com/v1"),
        ("http://[::1]:11500/proxy/", "http://[::1]:11500/proxy/v1"),
    ],
)
def test_ollama_host_is_read_as_ollamas_clients_read_it(
    monkeypatch: pytest.MonkeyPatch, host: str | None, base_url: str
) -> None:
    if host is None:
        monkeypatch.delenv("OLLAMA_HOST", raising=False)
    else:
        monkeypatch.setenv("OLLAMA_HOST", host)

    adapter = adapter_for("ollama:llama3.2")

    assert isinstance(adapter, OpenAIChatAdapter)
    assert str(adapter.client.base_url) == f"{base_url}/"
    assert (adapter.provider, adapter.model) == ("ollama", "llama3.2")


def test_no_key_is_needed_and_ollama_api_key_is_sent_when_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "https://ollama.example.com")  # not on this machine
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert adapter_for("ollama:m").client.api_key == "ollama"  # type: ignore[union-attr]
    monkeypatch.setenv("OLLAMA_API_KEY", "proxy-key")
    assert adapter_for("ollama:m").client.api_key == "proxy-key"  # type: ignore[union-attr]
    assert adapter_for("ollama:m", api_key="mine").client.api_key == "mine"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("ftp://box", "its scheme 'ftp' is not http or https"),
        ("box:port", "it does not parse"),
    ],
)
def test_an_unusable_ollama_host_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, host: str, why: str
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", host)

    with pytest.raises(BaseUrlError) as raised:
        adapter_for("ollama:m")

    assert str(raised.value).startswith(f"OLLAMA_HOST {host!r} does not name a usable Ollama")
    assert why in str(raised.value)
    assert raised.value.source == "OLLAMA_HOST"


def test_a_base_url_given_wins_over_ollama_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box")

    adapter = adapter_for("ollama:m", base_url="http://127.0.0.1:7000/v1")

    assert str(adapter.client.base_url) == "http://127.0.0.1:7000/v1/"  # type: ignore[union-attr]
