"""Fixtures for agent-loop tests: a fresh session and an agent factory with the
request check on (every scenario also proves its requests are reconstructable)."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_agent import AgentLoop
from dsh_llm import ModelAdapter
from dsh_session import Session

from .support import AgentFactory


@pytest.fixture
def session() -> Session:
    return Session.create()


@pytest.fixture
def make_agent(session: Session) -> AgentFactory:
    """Build an agent over ``session``; the request check is on and retries are off
    (a failure ends its turn at once) unless a test opts out."""

    def make(adapter: ModelAdapter, **options: Any) -> AgentLoop:
        options.setdefault("session", session)
        options.setdefault("provider", "test")
        options.setdefault("model", "test-model")
        options.setdefault("check_requests", True)
        options.setdefault("retry", None)
        return AgentLoop(adapter=adapter, **options)

    return make
