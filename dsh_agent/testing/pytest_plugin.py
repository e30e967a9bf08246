"""The pytest plugin of replay tests: the fixture ``dsh_replay``.

Registered through the package's ``pytest11`` entry point, so any test suite with dsh
installed has it::

    async def test_support_chat_still_behaves(dsh_replay):
        await dsh_replay("recordings/support.db", build_agent, session_id="01J...")

``await dsh_replay(source, agent_factory, **options)`` runs
:func:`dsh_agent.testing.replay` and fails the test with the first difference (the
request number, what changed, the message ids) when there is one; otherwise it returns
the :class:`~dsh_agent.testing.ReplayResult`. pytest is imported only here, by pytest.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

import pytest

from dsh_agent.testing._replay import ReplayAgentFactory, ReplayResult, Source, replay


class ReplayCheck(Protocol):
    """What the ``dsh_replay`` fixture is."""

    def __call__(
        self, source: Source, agent_factory: ReplayAgentFactory, **options: Any
    ) -> Awaitable[ReplayResult]: ...


@pytest.fixture
def dsh_replay() -> ReplayCheck:
    """Replay a recorded session against today's code; fail the test at the first
    request that differs."""

    async def check(
        source: Source, agent_factory: ReplayAgentFactory, **options: Any
    ) -> ReplayResult:
        result = await replay(source, agent_factory, **options)
        if not result.ok:
            pytest.fail(f"replay of a recorded session: {result}", pytrace=False)
        return result

    return check


__all__ = [
    "ReplayCheck",
    "dsh_replay",
]
