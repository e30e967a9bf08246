"""Issue 34 #5, the pre-step path: a handler raising an exception whose ``str()``
raises (or yields text that cannot be stored) ends its turn ``error`` like any failing
handler, and the next ``run()`` is not refused with "turn 1 is still open"."""

from __future__ import annotations

import logging

import pytest

from dsh_agent import AgentLoop, Enter, PreStep, Reject, run
from dsh_agent._agent import CallNext
from dsh_llm import create_user_message
from dsh_llm.testing import ScriptedAdapter
from dsh_session import ErrorReason, Session, TurnEndEvent


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
async def test_a_handler_whose_exception_cannot_be_printed_ends_its_turn(
    error_type: type[Exception],
) -> None:
    agent = AgentLoop(
        session=Session.create(), adapter=ScriptedAdapter(["ok"]), provider="test", model="m"
    )
    broken = True

    async def handler(step: PreStep, call_next: CallNext) -> Enter | Reject:
        if broken:
            raise error_type()
        return await call_next(step)

    agent.on_pre_step(handler)
    agent.followup(create_user_message(content="one", source={"kind": "user"}))
    await agent.when_idle()

    assert agent.session.open_turn is None
    (end,) = [e for e in agent.session.events if isinstance(e, TurnEndEvent)]
    assert isinstance(end.data.reason, ErrorReason)
    assert end.data.reason.error.code == "UNKNOWN"
    assert end.data.reason.error.message.startswith(error_type.__name__)

    broken = False
    result = await run(agent, create_user_message(content="two", source={"kind": "user"}))
    assert result.finish_reason == "completed"
    await agent.aclose()
