"""Replay tests: run a recorded session again against today's code and name the first
request that differs (docs/replay.md).

``await replay(session, factory)`` serves the model from the log, compares each request
the agent builds with the recorded one and returns a :class:`ReplayResult`; the pytest
plugin (``dsh_agent.testing.pytest_plugin``, registered by the package's entry point)
gives tests the fixture ``dsh_replay``.
"""

from dsh_agent.testing._diff import MessageChange, RequestDifference
from dsh_agent.testing._replay import ReplayAgentFactory, ReplayResult, ToolMode, replay

__all__ = [
    "MessageChange",
    "ReplayAgentFactory",
    "ReplayResult",
    "RequestDifference",
    "ToolMode",
    "replay",
]
