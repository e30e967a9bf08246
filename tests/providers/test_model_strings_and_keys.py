"""Issue 27, item 2: name the model once.

A loopback ``base_url`` needs no key; a missing key for a remote endpoint is a dsh
error naming the provider's variable; a model string builds the adapter; and an
``AgentLoop`` given only an adapter (or only a model string) logs the adapter's
provider and model in its request header. Every server here is on 127.0.0.1.
"""

from __future__ import annotations

import pytest

from dsh_agent import AgentLoop, run
from dsh_llm import (
    DshError,
    MissingApiKeyError,
    ModelStringError,
    create_user_message,
)
from dsh_llm.providers import AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, adapter_for
from dsh_llm.providers._keys import is_loopback
from dsh_llm.providers._model_string import parse_model_string
from dsh_session import Session
from providers.frames import CHAT_DONE, chat_chunk, text_reply
from providers.http_stub import Reply, StubServer, sse_reply

KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "OLLAMA_HOST",
    "OLLAMA_API_KEY",
)


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


def hello_reply() -> Reply:
    return sse_reply(
        [
            chat_chunk({"role": "assistant", "content": "hello"}),
            chat_chunk({}, finish_reason="stop"),
            CHAT_DONE,
        ]
    )


def headers_of(agent: AgentLoop) -> list[tuple[str, str]]:
    return [
        (event.data.header.config.provider, event.data.header.config.model)
        for event in agent.session.events
        if event.type == "request/header"
    ]


# --- keys ---------------------------------------------------------------------------


async def test_no_key_and_a_loopback_base_url_constructs_and_streams(stub: StubServer) -> None:
    stub.script(hello_reply())
    adapter = OpenAIChatAdapter(base_url=f"{stub.url}/v1", model="local-model")

    agent = AgentLoop(session=Session.create(), adapter=adapter)
    result = await run(agent, create_user_message(content="hi", source={"kind": "user"}))

    assert result.final_response == "hello"
    assert stub.bodies[0]["model"] == "local-model"
    assert stub.requests[0].headers["authorization"] == "Bearer no-key"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/v1",
        "http://127.3.2.1/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8080/v1",
    ],
)
def test_every_loopback_form_needs_no_key(url: str) -> None:
    assert is_loopback(url)
    assert OpenAIChatAdapter(base_url=url, model="m").client.api_key == "no-key"
    assert AnthropicAdapter(base_url=url, model="m").client.api_key == "no-key"


@pytest.mark.parametrize(
    "url", ["http://192.168.1.10:8080/v1", "https://api.example.com/v1", "127.0.0.1:8080", ""]
)
def test_other_hosts_are_not_loopback(url: str) -> None:
    assert not is_loopback(url)


@pytest.mark.parametrize(
    ("build", "variable"),
    [
        (lambda: OpenAIChatAdapter(provider="deepseek"), "DEEPSEEK_API_KEY"),
        (lambda: OpenAIChatAdapter(), "OPENAI_API_KEY"),
        (lambda: OpenAIChatAdapter(provider="openai", model="gpt-4.1"), "OPENAI_API_KEY"),
        (
            lambda: OpenAIChatAdapter(provider="deepseek", base_url="https://api.deepseek.com"),
            "DEEPSEEK_API_KEY",
        ),
        (lambda: OpenAIChatAdapter(base_url="https://gateway.example.com/v1"), "OPENAI_API_KEY"),
        (lambda: AnthropicAdapter(), "ANTHROPIC_API_KEY"),
        (lambda: adapter_for("deepseek:deepseek-chat"), "DEEPSEEK_API_KEY"),
        (lambda: adapter_for("anthropic:claude-sonnet-4-5"), "ANTHROPIC_API_KEY"),
        (lambda: GeminiAdapter(), "GEMINI_API_KEY"),
        (lambda: adapter_for("gemini:gemini-2.5-flash"), "GEMINI_API_KEY"),
    ],
)
def test_no_key_for_a_remote_endpoint_is_a_dsh_error_naming_the_variable(
    build: object, variable: str
) -> None:
    with pytest.raises(MissingApiKeyError) as raised:
        build()  # type: ignore[operator]

    assert isinstance(raised.value, DshError)
    assert raised.value.variable == variable
    assert variable in str(raised.value)
    assert "Missing credentials" not in str(raised.value)


def test_a_key_from_the_environment_or_the_caller_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-env")
    assert OpenAIChatAdapter(provider="deepseek").client.api_key == "sk-env"
    assert OpenAIChatAdapter(provider="deepseek", api_key="sk-arg").client.api_key == "sk-arg"
    # A loopback server still gets the configured key, for servers started with one.
    local = OpenAIChatAdapter(provider="deepseek", base_url="http://127.0.0.1:1/v1")
    assert local.client.api_key == "sk-env"


# --- model strings ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "provider", "model", "base_url"),
    [
        ("openai:gpt-4.1", "openai", "gpt-4.1", None),
        ("deepseek:deepseek-chat", "deepseek", "deepseek-chat", None),
        ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", None),
        ("openai:ft:gpt-4.1:org::id", "openai", "ft:gpt-4.1:org::id", None),
        ("gemini:gemini-2.5-flash", "gemini", "gemini-2.5-flash", None),
        ("ollama:llama3:8b", "ollama", "llama3:8b", None),
        (
            "openai-compatible:llama3:8b@http://127.0.0.1:11434/v1",
            "openai-compatible",
            "llama3:8b",
            "http://127.0.0.1:11434/v1",
        ),
    ],
)
def test_model_strings_parse(text: str, provider: str, model: str, base_url: str | None) -> None:
    parsed = parse_model_string(text)
    assert (parsed.provider, parsed.model, parsed.base_url) == (provider, model, base_url)


def test_model_strings_build_their_adapters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-o")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-d")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-a")
    monkeypatch.setenv("GEMINI_API_KEY", "g-key")

    openai_adapter = adapter_for("openai:gpt-4.1")
    deepseek = adapter_for("deepseek:deepseek-chat", timeout=5.0)
    claude = adapter_for("anthropic:claude-sonnet-4-5")
    local = adapter_for("openai-compatible:qwen3@http://127.0.0.1:8080/v1")
    gemini = adapter_for("gemini:gemini-2.5-flash")
    ollama = adapter_for("ollama:llama3:8b")

    assert isinstance(openai_adapter, OpenAIChatAdapter)
    assert (openai_adapter.provider, openai_adapter.model) == ("openai", "gpt-4.1")
    assert openai_adapter.client.api_key == "sk-o"
    assert isinstance(deepseek, OpenAIChatAdapter)
    assert (deepseek.provider, deepseek.model) == ("deepseek", "deepseek-chat")
    assert str(deepseek.client.base_url).startswith("https://api.deepseek.com")
    assert deepseek.client.api_key == "sk-d"
    assert isinstance(claude, AnthropicAdapter)
    assert (claude.provider, claude.model) == ("anthropic", "claude-sonnet-4-5")
    assert isinstance(local, OpenAIChatAdapter)
    assert (local.provider, local.model) == ("openai-compatible", "qwen3")
    assert str(local.client.base_url) == "http://127.0.0.1:8080/v1/"
    assert isinstance(gemini, GeminiAdapter)
    assert (gemini.provider, gemini.model) == ("gemini", "gemini-2.5-flash")
    assert isinstance(ollama, OpenAIChatAdapter)
    assert (ollama.provider, ollama.model) == ("ollama", "llama3:8b")
    assert str(ollama.client.base_url) == "http://127.0.0.1:11434/v1/"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("gpt-4.1", "no provider prefix"),
        (":gpt-4.1", "no provider prefix"),
        ("openai:", "no model name"),
        ("mistral:large", "unknown provider 'mistral'"),
        ("openai-compatible:qwen3", "needs MODEL@BASE_URL"),
        ("openai-compatible:@http://127.0.0.1:8080/v1", "no model name"),
        ("openai-compatible:qwen3@127.0.0.1:8080/v1", "it has no scheme"),
    ],
)
def test_a_malformed_model_string_names_the_accepted_forms(text: str, why: str) -> None:
    with pytest.raises(ModelStringError) as raised:
        adapter_for(text)

    message = str(raised.value)
    assert isinstance(raised.value, DshError)
    assert why in message
    for form in (
        "openai:MODEL",
        "deepseek:MODEL",
        "anthropic:MODEL",
        "gemini:MODEL",
        "ollama:MODEL",
        "openai-compatible:",
    ):
        assert form in message


# --- the loop takes provider and model from the adapter ------------------------------


async def test_agent_loop_takes_provider_and_model_from_the_adapter(stub: StubServer) -> None:
    stub.script(hello_reply())
    adapter = OpenAIChatAdapter(provider="vllm", base_url=f"{stub.url}/v1", model="qwen3-8b")

    agent = AgentLoop(session=Session.create(), adapter=adapter)
    await run(agent, create_user_message(content="hi", source={"kind": "user"}))

    assert (agent.config.provider, agent.config.model) == ("vllm", "qwen3-8b")
    assert headers_of(agent) == [("vllm", "qwen3-8b")]
    assert stub.bodies[0]["model"] == "qwen3-8b"


async def test_anthropic_adapter_names_its_provider_and_model(stub: StubServer) -> None:
    stub.script(sse_reply(text_reply("bonjour")))
    adapter = AnthropicAdapter(base_url=stub.url, model="claude-sonnet-4-5")

    agent = AgentLoop(session=Session.create(), adapter=adapter)
    result = await run(agent, create_user_message(content="hi", source={"kind": "user"}))

    assert result.final_response == "bonjour"
    assert headers_of(agent) == [("anthropic", "claude-sonnet-4-5")]
    assert stub.bodies[0]["model"] == "claude-sonnet-4-5"


async def test_explicit_provider_and_model_win_over_the_adapters(stub: StubServer) -> None:
    stub.script(hello_reply())
    adapter = OpenAIChatAdapter(base_url=f"{stub.url}/v1", model="adapter-model")

    agent = AgentLoop(
        session=Session.create(), adapter=adapter, provider="llamacpp", model="loop-model"
    )
    await run(agent, create_user_message(content="hi", source={"kind": "user"}))

    assert headers_of(agent) == [("llamacpp", "loop-model")]
    assert stub.bodies[0]["model"] == "loop-model"


async def test_agent_loop_builds_its_adapter_from_a_model_string(stub: StubServer) -> None:
    stub.script(hello_reply())

    agent = AgentLoop(session=Session.create(), model=f"openai-compatible:tiny@{stub.url}/v1")
    result = await run(agent, create_user_message(content="hi", source={"kind": "user"}))

    assert result.final_response == "hello"
    assert isinstance(agent.config.adapter, OpenAIChatAdapter)
    assert headers_of(agent) == [("openai-compatible", "tiny")]
    assert stub.bodies[0]["model"] == "tiny"


def test_agent_loop_without_a_model_says_how_to_name_one() -> None:
    with pytest.raises(ModelStringError, match="model='provider:model'"):
        AgentLoop(session=Session.create())
    with pytest.raises(ModelStringError, match="unknown provider 'mistral'"):
        AgentLoop(session=Session.create(), model="mistral:large")
    with pytest.raises(ModelStringError, match=r"needs a model: .*pass model=\.\.\."):
        AgentLoop(session=Session.create(), adapter=OpenAIChatAdapter(base_url="http://[::1]/v1"))
