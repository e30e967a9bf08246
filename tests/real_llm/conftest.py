"""One real llama.cpp server for the whole test session, stopped at its end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dsh_llm.providers import OpenAIChatAdapter
from real_llm.server import LlamaServer, start_llama_server


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    server = start_llama_server(tmp_path_factory.mktemp("llama"))
    yield server
    server.stop()


@pytest.fixture
def adapter(llama_server: LlamaServer) -> OpenAIChatAdapter:
    """The OpenAI-compatible adapter pointed at the server; no retries, no key needed."""
    return OpenAIChatAdapter(
        provider="llamacpp", base_url=llama_server.base_url, api_key="none", max_retries=0
    )
