"""Issue 34 #6: ``final_result`` arguments that are not a JSON object (or not JSON at
all) are failed attempts like any invalid answer: each counts against
``output_corrections``, the model is told what was wrong, and once the attempts are
spent the run stops with the real problem, not "answered without calling"."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from dsh_agent import AgentLoop, OutputValidationError, run
from dsh_llm import create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, ToolResultEvent


class Answer(BaseModel):
    value: int


def attempt(n: int, arguments: str) -> object:
    return reply(tool_calls=[{"call_id": f"c{n}", "name": "final_result", "arguments": arguments}])


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [("[1, 2]", "must be a JSON object"), ('{"value": ', "not valid JSON")],
)
async def test_unparsed_final_result_arguments_count_as_failed_attempts(
    arguments: str, problem: str
) -> None:
    adapter = ScriptedAdapter([attempt(n, arguments) for n in range(18)])  # type: ignore[misc]
    agent = AgentLoop(session=Session.create(), adapter=adapter, provider="test", model="m")

    with pytest.raises(OutputValidationError) as raised:
        await run(
            agent,
            create_user_message(content="answer", source={"kind": "user"}),
            output_type=Answer,
            output_corrections=2,
        )

    assert len(adapter.requests) == 3  # the first attempt and two corrections
    assert len(raised.value.problems) == 3
    assert all(problem in p for p in raised.value.problems)
    assert "without calling" not in str(raised.value)
    results = [e for e in agent.session.events if isinstance(e, ToolResultEvent)]
    texts = [r.data.message.content[0].content[0].text for r in results]  # type: ignore[union-attr]
    assert all(problem in text for text in texts)
    assert ["again" in text for text in texts] == [True, True, False]
    assert agent.session.open_turn is None
    await agent.aclose()
