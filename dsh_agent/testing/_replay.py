"""``replay``: run a recorded conversation again against today's code.

The inputs are the recording's deliveries (every message given to the agent entered
the durable inbox: ``agent/inbox/spliced``), made again with the same message objects,
ids included, each at the moment the recording made it (before the answer of the model
attempt that was streaming). The model is the recording (``ReplayAdapter``): each
request today's agent builds is compared with the request rebuilt from the log
(``reconstruct_attempts``), then answered with what the recorded model streamed. Tools
return their recorded results, or run for real. The agent runs over a new in-memory
session with no store, so a replay writes nowhere, least of all to the recording.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dsh_agent._engine.loop import AgentLoop
from dsh_agent.errors import ReplayError
from dsh_agent.testing._adapter import ReplayAdapter
from dsh_agent.testing._diff import RequestDifference
from dsh_agent.testing._recording import Delivery, Recording, read_recording
from dsh_agent.tools import Tool, ToolContext, ToolOutput
from dsh_llm._request import ModelAdapter
from dsh_session._session import Session
from dsh_session.errors import StoreError
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore, open_store

ToolMode = Literal["recorded", "live"]
ReplayAgentFactory = Callable[[Session, ModelAdapter], AgentLoop]
"""``factory(session, adapter)``: the agent as today's code builds it, over ``session``
and talking to ``adapter`` (the replay's recorded model)."""
Source = Session | str | os.PathLike[str] | tuple[str | os.PathLike[str], str]
"""A recorded session: a :class:`Session`, or a store (URL or path) and a session id."""


@dataclass(frozen=True)
class ReplayResult:
    """What a replay found."""

    first_difference: RequestDifference | None
    """The first request that differs from the recording (``None`` when none did);
    ``str()`` of it names the request number and the ids of the messages that differ."""
    requests: int
    """Requests today's code made (summary requests not counted)."""
    recorded_requests: int
    """Requests the recording holds (before ``until``, when given)."""
    session: Session
    """The in-memory session the replay ran on: today's code's log of the recorded
    conversation, to inspect, or to continue with a live adapter."""

    @property
    def ok(self) -> bool:
        """Every request today's code made is the recorded one, and none is missing."""
        return self.first_difference is None

    def __str__(self) -> str:
        if self.first_difference is None:
            return f"replay ok: {self.requests} request(s) as recorded"
        return str(self.first_difference)


async def replay(
    source: Source,
    agent_factory: ReplayAgentFactory,
    *,
    session_id: str | None = None,
    tools: ToolMode = "recorded",
    until: int | None = None,
) -> ReplayResult:
    """Replay a recorded session against the agent ``agent_factory`` builds today.

    ``source`` is a :class:`Session`, or a store URL or path (a SQLite file, a JSONL
    folder) with ``session_id`` (or a ``(location, session_id)`` pair); the store is
    opened read-only. ``tools="recorded"`` answers each tool call with its recorded
    result; ``"live"`` runs the agent's tools. With ``until`` only the deliveries logged
    before that seq are made (the turns they start run to their end): the result's
    ``session`` is then a counterfactual fork to continue with a live adapter.

    Raises :class:`ReplayError` when the recording holds no model request, or calls a
    tool the agent does not have."""
    if tools not in ("recorded", "live"):
        raise ValueError(f"tools must be 'recorded' or 'live', not {tools!r}")
    recorded = await _recorded(source, session_id)
    recording = read_recording(recorded.id, recorded.events, until)
    if not recording.attempts:
        raise ReplayError(f"session {recorded.id!r} holds no model request to replay")
    expected = sum(1 for a in recording.attempts if until is None or a.seq < until)
    return await _Replay(recording, agent_factory, tools, expected).run()


class _Replay:
    def __init__(
        self, recording: Recording, factory: ReplayAgentFactory, tools: ToolMode, expected: int
    ) -> None:
        self._recording = recording
        self._factory = factory
        self._tools = tools
        self._expected = expected
        self._pending: list[Delivery] = list(recording.deliveries)
        self._session = Session.create()
        self._adapter = ReplayAdapter(
            recording,
            lambda answer: self._deliver(answer + 1),
            lambda: self._session.surface.generation,
        )
        self._agent: AgentLoop | None = None

    async def run(self) -> ReplayResult:
        agent = self._agent = await self._build()
        try:
            self._deliver(0)
            while True:
                await agent.when_idle()
                if self._adapter.difference is not None or not self._pending:
                    break
                self._deliver(self._pending[0].after_attempt)  # made while idle
        finally:
            await agent.aclose()
        return ReplayResult(
            self._difference(), self._adapter.requests, self._expected, self._session
        )

    def _difference(self) -> RequestDifference | None:
        made = self._adapter.requests
        if self._adapter.difference is not None or made >= self._expected:
            return self._adapter.difference
        return RequestDifference(
            made + 1,
            self._recording.attempts[made].seq,
            problem=(
                f"today's code made {made} request(s); the recording has {self._expected}: "
                f"request {made + 1} was not made"
            ),
        )

    def _deliver(self, started: int) -> None:
        """Make the deliveries the recording made once ``started`` attempts had begun."""
        assert self._agent is not None
        while self._pending and self._pending[0].after_attempt <= started:
            delivery = self._pending.pop(0)
            if delivery.target == "next-turn":
                self._agent.followup(delivery.message)
            else:
                self._agent.steer(delivery.message)

    async def _build(self) -> AgentLoop:
        """The factory's agent, rebuilt with the replay's model and tools and no store
        (a store the factory gave it is let go before anything is written)."""
        built = self._factory(self._session, self._adapter)
        config = built.config
        if config.store is None:
            await built.aclose()
        else:
            config.store.detach(self._session)
            with contextlib.suppress(StoreError):  # its last flush, to the store let go
                await built.aclose()
        missing = sorted(self._recording.tool_names - {t.name for t in config.tools})
        if missing:
            raise ReplayError(
                f"session {self._recording.session_id!r} was recorded with tools the agent "
                f"does not have: {', '.join(missing)}"
            )
        chosen = config.tools if self._tools == "live" else self._recorded_tools(config.tools)
        rebuilt = dataclasses.replace(config, adapter=self._adapter, store=None, tools=chosen)
        return AgentLoop.from_config(session=self._session, config=rebuilt)

    def _recorded_tools(self, tools: Sequence[Tool[Any]]) -> tuple[Tool[Any], ...]:
        return tuple(_recorded_tool(tool, self._recording) for tool in tools)


def _recorded_tool(tool: Tool[Any], recording: Recording) -> Tool[Any]:
    """The tool as the model sees it, answering with the recorded result of each call."""

    async def answer(arguments: dict[str, Any], context: ToolContext[Any]) -> ToolOutput:
        result = recording.tool_results.get(context.call_id)
        if result is None:
            raise ReplayError(
                f"the recording holds no result for call {context.call_id!r} of {tool.name!r}"
            )
        block = result.content[0]
        return ToolOutput(block.content, is_error=block.is_error)

    return Tool(
        name=tool.name,
        description=tool.description,
        parameters=tool.parameters,
        handler=answer,
        concurrency_safe=tool.concurrency_safe,
    )


async def _recorded(source: Source, session_id: str | None) -> Session:
    if isinstance(source, Session):
        return source
    if isinstance(source, tuple):
        source, session_id = source
    if session_id is None:
        raise ReplayError(f"replaying from {source}: name the session (session_id=...)")
    async with _read_only_store(source) as store:
        session, _ = await store.read(session_id)
    return session


def _read_only_store(location: str | os.PathLike[str]) -> SessionStore:
    text = os.fspath(location)
    if "://" in text:
        return open_store(text, mode="read")
    path = Path(text)
    if path.is_dir():
        return JsonlSessionStore(path, mode="read")
    return SqliteSessionStore(path, mode="read")


__all__ = [
    "ReplayAgentFactory",
    "ReplayResult",
    "Source",
    "ToolMode",
    "replay",
]
