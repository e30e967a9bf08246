"""Issue 34 #5, the tool path: a tool raising an exception whose ``str()`` raises (or
yields text that cannot be stored) is answered ``TOOL_FAILED`` like any failing tool:
the call ran, so it is never logged ``TOOL_NOT_STARTED``, and the turn goes on."""

from __future__ import annotations

import logging

import pytest

from dsh_agent import AgentLoop, tool
from dsh_llm import create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, ToolResultEvent, TurnEndEvent


class Unprintable(Exception):
    def __str__(self) -> str:
        raise AttributeError("this exception cannot be printed")


class Unstorable(Exception):
    def __str__(self) -> str:
        return "bad path /etc/caf\udce9"  # a lone surrogate, as os.fsdecode yields


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """dsh logs the failure's traceback, lone surrogate and all; pytest-xdist cannot
    send such a captured log from its worker, so these tests do not capture it."""
    monkeypatch.setattr(logging.getLogger("dsh_agent"), "disabled", True)


@pytest.mark.parametrize("error_type", [Unprintable, Unstorable])
async def test_a_tool_whose_exception_cannot_be_printed_fails_as_tool_failed(
    error_type: type[Exception],
) -> None:
    runs: list[str] = []

    @tool
    async def touch(path: str) -> str:
        """Touch a path."""
        runs.append(path)
        raise error_type()

    call = reply(tool_calls=[{"call_id": "c1", "name": "touch", "arguments": {"path": "/x"}}])
    adapter = ScriptedAdapter([call, reply(text="sorry")])
    agent = AgentLoop(
        session=Session.create(), adapter=adapter, provider="test", model="m", tools=[touch]
    )
    agent.followup(create_user_message(content="go", source={"kind": "user"}))
    await agent.when_idle()

    assert runs == ["/x"]
    (result,) = [e for e in agent.session.events if isinstance(e, ToolResultEvent)]
    assert result.data.error is not None
    assert result.data.error.code == "TOOL_FAILED"
    assert result.data.error.name == error_type.__name__
    text = result.data.message.content[0].content[0].text  # type: ignore[union-attr]
    assert error_type.__name__ in text
    (end,) = [e for e in agent.session.events if isinstance(e, TurnEndEvent)]
    assert end.data.reason.kind == "completed"
    assert len(adapter.requests) == 2  # the model saw the failure and answered
    await agent.aclose()
