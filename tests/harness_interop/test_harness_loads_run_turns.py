"""The turns of runs with per-run options load and resume in the real TypeScript
harness: a ``turn/start`` carrying ``runOptions`` (a field the harness does not know,
in a payload it reads only ``turn`` from), request headers whose config holds
``promptCache`` (another such field), a structured-output run whose corrections
left the surface through an empty ``assistant/message`` replace inside its last step,
and a run whose turn waited for approval with its options. The harness loads the
store under its session invariant checks, derives the same history (message ids),
appends a turn; dsh loads it back unchanged.

Runs only when DSH_BENCH_HARNESS, DSH_BENCH_TSX and DSH_BENCH_NODE name the harness
(bench/README.md, "Harness peer"); skipped otherwise."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from _harness_peer import HarnessTools
from harness_stores.roots import wire_events
from pydantic import BaseModel

from dsh_agent import AgentLoop, ModelSettings, run, tool
from dsh_llm import CallId, PromptCache
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, SessionStore

from .test_harness_loads_dsh_stores import (
    APPENDED_TYPES,
    FORMS,
    StoreForm,
    load_session,
    private_folder,
    run_driver,
)


class City(BaseModel):
    name: str


@tool(requires_approval=True)
async def delete(path: str) -> str:
    """Delete a path."""
    return f"deleted {path}"


def write_runs(store: SessionStore) -> Session:
    """Three runs: one with settings and instructions, one structured run answered after
    a text answer and an invalid call, one whose turn waits for approval and is approved."""
    final = "final_result"
    adapter = ScriptedAdapter(
        [
            "Hello.",
            "Oslo, I think.",
            reply(tool_calls=[{"call_id": "bad", "name": final, "arguments": {"town": "Oslo"}}]),
            reply(tool_calls=[{"call_id": "ok", "name": final, "arguments": {"name": "Oslo"}}]),
            reply(tool_calls=[{"call_id": "rm", "name": "delete", "arguments": {"path": "x"}}]),
            "Deleted.",
        ]
    )

    async def go() -> Session:
        async with store:
            session = Session.create()
            agent = AgentLoop(
                session=session,
                adapter=adapter,
                provider="test",
                model="scripted",
                tools=[delete],
                store=store,
            )
            cache = PromptCache(key="runs", retention="long")
            settings = ModelSettings(temperature=0, max_tokens=77, prompt_cache=cache)
            await run(agent, "Hi", settings=settings, instructions="Be brief.")
            assert (await run(agent, "Which city?", output_type=City)).output == City(name="Oslo")
            await run(agent, "Delete x", settings=settings)
            await agent.approve(CallId("rm"))
            await agent.when_idle()
            await agent.aclose()
            return session

    return asyncio.run(go())


@pytest.mark.parametrize("form", FORMS, ids=[form.name for form in FORMS])
def test_the_harness_resumes_the_turns_of_runs(
    tools: HarnessTools, form: StoreForm, tmp_path: Path
) -> None:
    location = private_folder(tmp_path) / form.location
    written = write_runs(form.open(location))
    dsh_events = wire_events(written)
    assert any(
        "runOptions" in event["data"] for event in dsh_events if event["type"] == "turn/start"
    )
    assert any(  # a config field the harness does not check (it reads provider, model, effort)
        "promptCache" in event["data"]["header"]["config"]
        for event in dsh_events
        if event["type"] == "request/header"
    )
    assert any(
        event["type"] == "assistant/message" and isinstance(event.get("surfaceOp"), dict)
        for event in dsh_events
    )
    dsh_message_ids = [message.id for message in written.derive_messages()]

    summary = run_driver(tools, form, location, written.id)

    assert summary["loadedEvents"] == len(dsh_events)
    assert summary["loadedMessageIds"] == dsh_message_ids
    assert [event["type"] for event in summary["appended"]] == APPENDED_TYPES
    loaded, dsh_appended = load_session(form.open(location), written.id)
    assert wire_events(loaded)[: len(dsh_events)] == dsh_events
    assert dsh_appended == ["session/end-seed"]
