"""Fixtures for the provider adapter tests: a scripted HTTP server on 127.0.0.1."""

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
