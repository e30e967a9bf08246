"""Fixtures for the retry tests: the scripted OpenAI-compatible server on 127.0.0.1
(the provider tests' own) and an agent talking to it through the real adapter."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from providers.http_stub import StubServer


@pytest.fixture
async def stub() -> AsyncIterator[StubServer]:
    server = StubServer()
    await server.start()
    yield server
    await server.close()
