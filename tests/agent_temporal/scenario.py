"""The agent, tools and workflow the Temporal tests run, shared by the in-process
worker and the worker subprocess (``worker_process.py``).

The model is the scripted OpenAI-compatible server of ``tests/cli/openai_server.py``
(``call TOOL {JSON}`` asks for a call; a tool result is answered ``Tool said: ...``).
Every tool keeps its side effects in files under one folder, so a test can count them
across processes: ``<tool>.count`` is bumped once per effect, and while a file
``hold`` exists a tool waits after its effect (``holding`` tells the test it waits).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from dsh_agent import AgentConfig, Tool, ToolContext
    from dsh_agent.temporal import (
        ModelStepInput,
        SessionWorkflow,
        StepReport,
        TemporalAgent,
        ToolStepInput,
        TurnControl,
        TurnOutcome,
    )
    from dsh_llm.providers import adapter_for

AGENT_NAME = "scripted"
IDEMPOTENT_TOOLS = frozenset({"bump_once"})


def count(folder: Path, tool: str) -> int:
    path = folder / f"{tool}.count"
    return int(path.read_text()) if path.exists() else 0


async def _hold_while_asked(folder: Path) -> None:
    if (folder / "hold").exists():
        (folder / "holding").touch()
        while (folder / "hold").exists():
            await asyncio.sleep(0.05)


def _bump(folder: Path, tool: str) -> int:
    value = count(folder, tool) + 1
    (folder / f"{tool}.count").write_text(str(value))
    return value


def scripted_tools(folder: Path) -> tuple[Tool, ...]:
    """``bump`` (a side effect, not idempotent), ``bump_once`` (idempotent through
    ``ToolContext.idempotency_key``) and ``guarded`` (needs approval)."""

    async def bump(arguments: dict[str, Any]) -> str:
        value = _bump(folder, "bump")
        await _hold_while_asked(folder)
        return f"bumped to {value}"

    async def bump_once(arguments: dict[str, Any], context: ToolContext) -> str:
        keys = folder / "bump_once.keys"
        seen = keys.read_text().split() if keys.exists() else []
        if context.idempotency_key not in seen:
            keys.write_text(" ".join([*seen, context.idempotency_key]))
            _bump(folder, "bump_once")
        await _hold_while_asked(folder)
        return f"bumped once to {count(folder, 'bump_once')}"

    async def guarded(arguments: dict[str, Any]) -> str:
        return f"guarded ran {_bump(folder, 'guarded')} time(s)"

    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    return (
        Tool(name="bump", description="Bump a counter.", parameters=schema, handler=bump),
        Tool(
            name="bump_once",
            description="Bump a counter once per call.",
            parameters=schema,
            handler=bump_once,
        ),
        Tool(
            name="guarded",
            description="Bump a counter once a person approves.",
            parameters=schema,
            handler=guarded,
            requires_approval=True,
        ),
    )


def worker_agent(base_url: str, folder: Path) -> TemporalAgent:
    """The agent as a worker builds it: no store URL (each activity's input names it)."""

    def config() -> AgentConfig[Any]:
        adapter = adapter_for(f"openai-compatible:scripted-model@{base_url}")
        return AgentConfig(
            adapter=adapter,
            provider="openai-compatible",
            model="scripted-model",
            tools=scripted_tools(folder),
        )

    return TemporalAgent(AGENT_NAME, config=config, idempotent_tools=IDEMPOTENT_TOOLS)


@dataclass(frozen=True)
class ConversationInput:
    store_url: str
    session_id: str
    messages: tuple[str, ...]
    heartbeat_seconds: float = 5.0  # a dead worker is noticed in 5 s; 1 s was missed under load

    def agent(self) -> TemporalAgent:
        """The agent a workflow runs the conversation with."""
        return TemporalAgent(
            AGENT_NAME,
            store_url=self.store_url,
            heartbeat=timedelta(seconds=self.heartbeat_seconds),
        )


@workflow.defn(name="scripted-conversation")
class Conversation:
    """A user's own workflow: one agent turn per message."""

    @workflow.run
    async def run(self, given: ConversationInput) -> list[TurnOutcome]:
        agent = given.agent()
        return [await agent.run(given.session_id, text) for text in given.messages]


@workflow.defn(name="scripted-steerable")
class SteerableConversation:
    """A user's own workflow whose signal handlers steer or cancel its agent's turn
    through a ``TurnControl``."""

    def __init__(self) -> None:
        self._control = TurnControl()

    @workflow.signal(name="cancel")
    def cancel(self) -> None:
        self._control.cancelled = True

    @workflow.query(name="cancelling")
    def cancelling(self) -> bool:
        return self._control.cancelled

    @workflow.run
    async def run(self, given: ConversationInput) -> list[TurnOutcome]:
        agent = given.agent()
        outcomes = []
        for text in given.messages:
            outcomes.append(await agent.run(given.session_id, text, control=self._control))
            self._control.cancelled = False
        return outcomes


@dataclass(frozen=True)
class OnePieceInput:
    """One activity of the agent, scheduled by hand: a model step or a tool call."""

    model_step: ModelStepInput | None = None
    tool_call: ToolStepInput | None = None


@workflow.defn(name="scripted-one-piece")
class OnePiece:
    """A user's workflow scheduling one of the agent's activities with the given input
    (as a workflow with its own bookkeeping would), to see what the activity refuses."""

    @workflow.run
    async def run(self, given: OnePieceInput) -> StepReport:
        piece, value = (
            ("model_step", given.model_step)
            if given.model_step is not None
            else ("tool_call", given.tool_call)
        )
        report: StepReport = await workflow.execute_activity(
            f"{AGENT_NAME}.{piece}",
            value,
            result_type=StepReport,
            start_to_close_timeout=timedelta(seconds=60),
        )
        return report


WORKFLOWS = (Conversation, OnePiece, SessionWorkflow, SteerableConversation)
