"""Issue 27, item 6: the base URL is checked when the adapter is built.

A base URL with no scheme, another scheme than http/https, no host, or text that is
not a URL raises :class:`BaseUrlError` naming the value (its credentials masked)
and where it came from: the argument, ``OPENAI_BASE_URL`` / ``DEEPSEEK_BASE_URL`` /
``ANTHROPIC_BASE_URL``,
or a model string. Before, it was accepted and failed at the first request as
"Connection error." or an SDK ``UnsupportedProtocol``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dsh_llm import BaseUrlError, DshError, ModelStringError
from dsh_llm.providers import AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, adapter_for

BUILDERS: dict[str, Callable[..., Any]] = {
    "openai": lambda **options: OpenAIChatAdapter(api_key="k", **options),
    "anthropic": lambda **options: AnthropicAdapter(api_key="k", **options),
    "gemini": lambda **options: GeminiAdapter(api_key="k", **options),
    "ollama": lambda **options: adapter_for("ollama:llama3.2", **options),
    "model string": lambda **options: adapter_for("deepseek:deepseek-chat", api_key="k", **options),
}


@pytest.fixture(params=list(BUILDERS))
def build(request: pytest.FixtureRequest) -> Callable[..., Any]:
    return BUILDERS[request.param]


@pytest.fixture(autouse=True)
def no_base_url_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in (
        "OPENAI_BASE_URL",
        "DEEPSEEK_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "GOOGLE_GEMINI_BASE_URL",
        "OLLAMA_HOST",
    ):
        monkeypatch.delenv(variable, raising=False)


@pytest.mark.parametrize(
    ("base_url", "why"),
    [
        (
            "127.0.0.1:8080/v1",
            "it has no scheme (http:// or https://): did you mean 'http://127.0.0.1:8080/v1'?",
        ),
        ("localhost:8080", "it has no scheme"),
        ("api.deepseek.com", "it has no scheme"),
        ("http:/127.0.0.1:8080", "it has no scheme (http:// or https://)"),
        ("ftp://example.com/v1", "its scheme 'ftp' is not http or https"),
        ("ws://127.0.0.1:8080", "its scheme 'ws' is not http or https"),
        ("http://", "it names no host"),
        ("https:///v1", "it names no host"),
        ("http://exa mple.com/v1", "it holds a space or a control character"),
        ("http://127.0.0.1:8080/v1\n", "it holds a space or a control character"),
        ("http://[::1/v1", "it does not parse as a URL"),
        ("http://127.0.0.1:99999/v1", "it does not parse as a URL"),
        ("http://127.0.0.1:port/v1", "it does not parse as a URL"),
        ("", "it is empty"),
    ],
)
def test_an_unusable_base_url_is_refused_at_construction(
    build: Callable[..., Any], base_url: str, why: str
) -> None:
    with pytest.raises(BaseUrlError) as raised:
        build(base_url=base_url)

    error = raised.value
    assert isinstance(error, DshError) and isinstance(error, ValueError)
    assert str(error).startswith(f"base_url {base_url!r} is not a usable base URL: {why}")
    assert (error.base_url, error.source) == (base_url, "base_url")


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8080/v1",
        "https://api.example.com",
        "http://[::1]:8080",
        "HTTP://LOCALHOST",
    ],
)
def test_a_usable_base_url_is_accepted(build: Callable[..., Any], base_url: str) -> None:
    build(base_url=base_url)


def test_credentials_in_a_refused_base_url_are_masked(build: Callable[..., Any]) -> None:
    with pytest.raises(BaseUrlError) as raised:
        build(base_url="ftp://user:s3cret@example.com/v1")

    assert "s3cret" not in str(raised.value)
    assert "'ftp://***@example.com/v1'" in str(raised.value)


@pytest.mark.parametrize(
    ("variable", "make"),
    [
        ("OPENAI_BASE_URL", lambda: OpenAIChatAdapter(api_key="k")),
        ("OPENAI_BASE_URL", lambda: adapter_for("openai:gpt-4.1", api_key="k")),
        ("DEEPSEEK_BASE_URL", lambda: OpenAIChatAdapter(provider="deepseek", api_key="k")),
        ("DEEPSEEK_BASE_URL", lambda: adapter_for("deepseek:deepseek-chat", api_key="k")),
        ("ANTHROPIC_BASE_URL", lambda: AnthropicAdapter(api_key="k")),
        ("GOOGLE_GEMINI_BASE_URL", lambda: GeminiAdapter(api_key="k")),
        ("GOOGLE_GEMINI_BASE_URL", lambda: adapter_for("gemini:gemini-2.5-flash", api_key="k")),
    ],
)
def test_a_base_url_from_the_environment_is_checked_and_named(
    monkeypatch: pytest.MonkeyPatch, variable: str, make: Callable[[], Any]
) -> None:
    monkeypatch.setenv(variable, "localhost:8080")

    with pytest.raises(BaseUrlError) as raised:
        make()

    assert str(raised.value).startswith(f"{variable} 'localhost:8080' is not a usable base URL")
    assert raised.value.source == variable


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("openai-compatible:qwen3@127.0.0.1:8080/v1", "it has no scheme"),
        ("openai-compatible:qwen3@ftp://127.0.0.1/v1", "its scheme 'ftp' is not http or https"),
        ("openai-compatible:qwen3@http://", "it names no host"),
        ("openai-compatible:qwen3@http://127.0.0.1:99999/v1", "it does not parse as a URL"),
    ],
)
def test_a_model_strings_base_url_is_checked_the_same_way(text: str, why: str) -> None:
    with pytest.raises(ModelStringError) as raised:
        adapter_for(text)

    assert why in str(raised.value)
