"""Sessions of issue 32 load and resume in the real TypeScript harness: a parent and
the sub-agent child dsh wrote (``agent_tool``), the child's header carrying the
harness's delegation fields (``parentSession``, ``origin: "subagent"``,
``delegationDepth``) as the harness reads them; and a turn a usage limit ended (an
``error`` reason with dsh's own code, refused tool results). Logs load whole, message
ids included.

Runs only when DSH_BENCH_HARNESS, DSH_BENCH_TSX and DSH_BENCH_NODE name the harness
(bench/README.md, "Harness peer"); skipped otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import pytest
from _harness_peer import HarnessTools
from harness_stores.roots import wire_events

from dsh_agent import AgentLoop, UsageLimits, agent_tool, run
from dsh_llm.failure_codes import USAGE_LIMIT_EXCEEDED
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, SessionStore
from dsh_session.events import ToolResultEvent

from .test_harness_loads_dsh_stores import (
    FORMS,
    StoreForm,
    private_folder,
    run_driver,
)

DELEGATE = reply(tool_calls=[{"name": "research", "arguments": {"prompt": "capital?"}}])
FORMS_CHECKED = [form for form in FORMS if form.name in ("sqlite", "jsonl-zstd")]


def write_parent_and_child(store: SessionStore) -> tuple[Session, Session]:
    """A parent turn that delegates once, with the child on the same store."""
    children: list[Session] = []

    def child(session: Session) -> AgentLoop:
        children.append(session)
        return AgentLoop(
            session=session,
            adapter=ScriptedAdapter(["Paris."]),
            provider="p",
            model="child",
            store=store,
        )

    async def write() -> Session:
        async with store:
            research = agent_tool(child, name="research", description="Ask a research agent.")
            parent = AgentLoop(
                session=Session.create(),
                adapter=ScriptedAdapter(
                    [
                        reply(
                            tool_calls=[{"name": "research", "arguments": {"prompt": "capital?"}}]
                        ),
                        "It is Paris.",
                    ]
                ),
                provider="p",
                model="parent",
                tools=[research],
                store=store,
            )
            await run(parent, "What is the capital of France?")
            await parent.aclose()
            return parent.session

    parent = asyncio.run(write())
    return parent, children[0]


@pytest.mark.parametrize("form", FORMS_CHECKED, ids=[form.name for form in FORMS_CHECKED])
def test_the_harness_loads_a_parent_and_its_child_with_the_lineage(
    tools: HarnessTools,
    form: StoreForm,
    tmp_path: Path,
) -> None:
    location = private_folder(tmp_path) / form.location
    parent, child = write_parent_and_child(form.open(location))
    [result] = [e.data for e in parent.events if isinstance(e, ToolResultEvent)]
    assert isinstance(result.meta, Mapping) and result.meta["childSession"] == child.id

    for written in (child, parent):
        events = wire_events(written)
        summary = run_driver(tools, form, location, written.id)
        assert sorted(summary["listed"]) == sorted([parent.id, child.id])
        assert summary["loadedEvents"] == len(events)
        assert summary["loadedMessageIds"] == [m.id for m in written.derive_messages()]
        if written is child:
            header = summary["header"]
            assert header["parentSession"] == parent.id
            assert header["origin"] == "subagent"
            assert header["delegationDepth"] == 1


def write_limited(store: SessionStore) -> Session:
    """A turn a tool call limit ended: refused results, then ``turn/end`` ``error``
    with code ``USAGE_LIMIT_EXCEEDED``."""

    async def write() -> Session:
        async with store:
            agent = AgentLoop(
                session=Session.create(),
                adapter=ScriptedAdapter([DELEGATE]),
                provider="p",
                model="m",
                tools=[agent_tool(lambda s: None, name="research", description="x")],  # type: ignore[arg-type,return-value]
                store=store,
                usage_limits=UsageLimits(tool_calls_limit=0),
            )
            await run(agent, "go", raise_on_error=False)
            await agent.aclose()
            return agent.session

    return asyncio.run(write())


@pytest.mark.parametrize("form", FORMS_CHECKED, ids=[form.name for form in FORMS_CHECKED])
def test_the_harness_loads_a_turn_a_usage_limit_ended(
    tools: HarnessTools,
    form: StoreForm,
    tmp_path: Path,
) -> None:
    location = private_folder(tmp_path) / form.location
    written = write_limited(form.open(location))
    ends = [e for e in wire_events(written) if e["type"] == "turn/end"]
    assert ends[-1]["data"]["reason"]["error"]["code"] == USAGE_LIMIT_EXCEEDED
    summary = run_driver(tools, form, location, written.id)
    assert summary["loadedEvents"] == len(wire_events(written))
    assert summary["loadedMessageIds"] == [m.id for m in written.derive_messages()]
