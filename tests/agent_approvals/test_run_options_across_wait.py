"""A run's options belong to its turn (issue 34, defect 4): settings, instructions and
the structured-output tool hold for every request of the turn, across an approval
wait in the same process and across a restart (the loop closed, the session reopened
from a real SQLite store, the call approved by a new loop), and every request is
still rebuilt exactly from the log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from dsh_agent import (
    AgentLoop,
    ModelSettings,
    OutputPendingError,
    reconstruct_requests,
    run,
)
from dsh_llm import CallId, PromptCache
from dsh_llm._request import GenerateRequest
from dsh_llm.testing import Response, ScriptedAdapter
from dsh_session import Session, ToolResultEvent, TurnEndEvent, TurnStartEvent
from dsh_session.stores import open_store

from .support import Workshop, calls, result_text, results

SETTINGS = ModelSettings(temperature=0, max_tokens=77, prompt_cache=PromptCache(key="clean-up"))


class Answer(BaseModel):
    text: str


def _sampling(adapter: ScriptedAdapter) -> list[tuple[float | None, int | None]]:
    return [(request.temperature, request.max_tokens) for request in adapter.requests]


async def test_the_issue_scenario_answers_final_result_after_the_approval() -> None:
    """[look, look, rm (needs approval), final_result]: the run returns at the wait
    with no error, and the decision lets final_result reach the run's collector."""
    workshop = Workshop()
    step = calls(
        ("l1", "look", {"path": "a"}),
        ("l2", "look", {"path": "b"}),
        ("rm", "delete", {"path": "c"}),
        ("out", "final_result", {"text": "done"}),
    )
    agent, adapter = workshop.agent([step])

    result = await run(agent, "clean up", output_type=Answer, settings=SETTINGS)

    assert result.finish_reason is None  # the turn waits
    with pytest.raises(OutputPendingError, match="waits for approval of call 'rm'"):
        _ = result.output
    await agent.approve(CallId("rm"))
    await agent.when_idle()

    assert result.output == Answer(text="done")
    answered = results(agent.session.events)
    assert result_text(answered["out"]) == "Final answer received."
    assert answered["out"].data.error is None
    assert workshop.runs == ["look:a", "look:b", "delete:c"]
    assert [e.data.reason.kind for e in agent.session.events if isinstance(e, TurnEndEvent)] == [
        "completed"
    ]
    assert reconstruct_requests(agent.session.events) == adapter.requests
    await agent.aclose()


async def test_settings_and_the_output_tool_hold_after_the_wait() -> None:
    """The first answer after the wait is invalid: the run's collector (not
    TOOL_NOT_FOUND) asks again, and the next request of the turn still carries the
    run's settings, instructions and final_result tool."""
    workshop = Workshop()
    responses: list[Response] = [
        calls(("rm", "delete", {"path": "c"}), ("bad", "final_result", {"wrong": 1})),
        calls(("good", "final_result", {"text": "cleaned"})),
    ]
    agent, adapter = workshop.agent(responses)

    result = await run(
        agent, "clean up", output_type=Answer, settings=SETTINGS, instructions="Be brief."
    )
    await agent.approve(CallId("rm"))
    await agent.when_idle()

    assert result.output == Answer(text="cleaned")
    assert _sampling(adapter) == [(0.0, 77), (0.0, 77)]
    assert [request.system for request in adapter.requests] == ["Be brief.", "Be brief."]
    for request in adapter.requests:
        assert "final_result" in [schema.name for schema in request.tools or ()]
    bad = results(agent.session.events)["bad"]
    assert bad.data.error is None or bad.data.error.code != "TOOL_NOT_FOUND"
    assert "not a valid Answer" in result_text(bad)
    assert reconstruct_requests(agent.session.events) == adapter.requests
    await agent.aclose()


async def test_a_turn_after_the_run_goes_back_to_the_loop_settings() -> None:
    workshop = Workshop()
    agent, adapter = workshop.agent(
        [calls(("rm", "delete", {"path": "c"})), "removed", "plain again"]
    )

    await run(agent, "clean up", settings=SETTINGS)
    await agent.approve(CallId("rm"))
    await agent.when_idle()
    await run(agent, "and now?")

    assert _sampling(adapter) == [(0.0, 77), (0.0, 77), (None, None)]
    starts = [e.data for e in agent.session.events if isinstance(e, TurnStartEvent)]
    assert starts[0].run_options is not None and starts[0].run_options.max_tokens == 77
    assert starts[1].run_options is None
    assert reconstruct_requests(agent.session.events) == adapter.requests
    await agent.aclose()


@pytest.mark.parametrize("with_output", [True, False])
async def test_the_options_survive_a_restart(tmp_path: Path, with_output: bool) -> None:
    """Close the loop at the wait, reopen the session from SQLite in a new store and
    loop, approve: the rest of the turn goes out with the run's options."""
    url = f"sqlite:///{tmp_path}/agent.db"
    workshop = Workshop()
    output = {"output_type": Answer} if with_output else {}
    first = ScriptedAdapter([calls(("l1", "look", {"path": "a"}), ("rm", "delete", {"path": "c"}))])
    async with open_store(url) as store:
        agent = AgentLoop(
            session=Session.create(),
            adapter=first,
            provider="test",
            model="scripted",
            tools=workshop.tools,
            store=store,
        )
        await run(agent, "clean up", settings=SETTINGS, instructions="Be brief.", **output)  # type: ignore[call-overload]
        session_id = agent.id
        assert [p.call_id for p in agent.pending_approvals] == ["rm"]
        await agent.aclose()

    answer = calls(("out", "final_result", {"text": "cleaned"})) if with_output else "cleaned"
    second = ScriptedAdapter([answer])
    async with open_store(url) as store:
        agent = AgentLoop(
            session=await store.load(session_id),
            adapter=second,
            provider="test",
            model="scripted",
            tools=workshop.tools,
            store=store,
        )
        await agent.approve(CallId("rm"))
        await agent.when_idle()
        events = list(agent.session.events)
        await agent.aclose()

    assert workshop.runs == ["look:a", "delete:c"]
    (request,) = second.requests
    assert (request.temperature, request.max_tokens) == (0.0, 77)
    assert request.prompt_cache == PromptCache(key="clean-up")
    assert request.system == "Be brief."
    offered = [schema.name for schema in request.tools or ()]
    assert ("final_result" in offered) is with_output
    if with_output:
        answered = results(events)["out"]
        assert answered.data.error is None
        assert result_text(answered) == "Final answer received."
    ends = [e.data.reason.kind for e in events if isinstance(e, TurnEndEvent)]
    assert ends == ["completed"]
    assert reconstruct_requests(events) == [*first.requests, *second.requests]
    assert not [
        e
        for e in events
        if isinstance(e, ToolResultEvent) and e.data.error and e.data.error.code == "TOOL_NOT_FOUND"
    ]


def _child(*args: str) -> str:
    """Run run_options_process.py with ``args`` in a process of its own; its stdout."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("run_options_process.py")), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_a_later_process_approves_with_the_run_options(tmp_path: Path) -> None:
    """The run in one process, the approval in another (a real restart over SQLite):
    the second process's request carries the first's settings, instructions and
    final_result tool, its final_result is answered, and the log rebuilds both."""
    url = f"sqlite:///{tmp_path}/agent.db"
    word, session_id = _child("ask", url, str(tmp_path)).split()
    assert word == "waiting"
    assert _child("approve", url, str(tmp_path), session_id) == "done\n"

    lines = (tmp_path / "requests.jsonl").read_text().splitlines()
    sent = [GenerateRequest.model_validate_json(line) for line in lines]
    after = sent[1]
    assert (after.temperature, after.max_tokens, after.system) == (0.0, 77, "Be brief.")
    assert "final_result" in [schema.name for schema in after.tools or ()]
    async with open_store(url, mode="read") as store:
        session, _ = await store.read(session_id)
    events = list(session.events)
    answered = results(events)["out"]
    assert answered.data.error is None
    assert result_text(answered) == "Final answer received."
    assert reconstruct_requests(events) == sent
