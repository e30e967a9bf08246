"""Issue 34 #5, the summarizer path: a summarizer raising an exception whose ``str()``
raises (or yields text that cannot be stored) fails ``compact_now()`` with a
``CompactionError``, its bracket closed by ``compaction/end {error}``, the surface as it
was, and the agent goes on."""

from __future__ import annotations

import logging

import pytest

from dsh_agent import AgentLoop, Compaction, CompactionError, SummarizationInput
from dsh_llm import GenerateRequest, create_user_message
from dsh_llm.testing import FunctionAdapter
from dsh_session import CompactionEndEvent, CompactionStartEvent, Session


class Unprintable(Exception):
    def __str__(self) -> str:
        raise AttributeError("this exception cannot be printed")


class Unstorable(Exception):
    def __str__(self) -> str:
        return "bad path /etc/caf\udce9"  # a lone surrogate, as os.fsdecode yields


def answer(request: GenerateRequest) -> str:
    return "answer " * 40


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """dsh logs the failure's traceback, lone surrogate and all; pytest-xdist cannot
    send such a captured log from its worker, so these tests do not capture it."""
    monkeypatch.setattr(logging.getLogger("dsh_agent"), "disabled", True)


@pytest.mark.parametrize("error_type", [Unprintable, Unstorable])
async def test_a_summarizer_whose_exception_cannot_be_printed_fails_compaction_cleanly(
    error_type: type[Exception],
) -> None:
    async def summarizer(source: SummarizationInput) -> str:
        raise error_type()

    session = Session.create()
    agent = AgentLoop(
        session=session,
        adapter=FunctionAdapter(answer),
        provider="test",
        model="test-model",
        context_window=100_000,
        compaction=Compaction(summarizer=summarizer),
    )
    for n in (1, 2):
        agent.followup(create_user_message(content=f"question {n}", source={"kind": "user"}))
        await agent.when_idle()
    surface = session.derive_messages()

    with pytest.raises(CompactionError) as raised:
        await agent.compact_now()

    assert str(raised.value).startswith("compaction ")
    (start,) = [e for e in session.events if isinstance(e, CompactionStartEvent)]
    (end,) = [e for e in session.events if isinstance(e, CompactionEndEvent)]
    assert end.data.compaction_id == start.data.compaction_id
    assert end.data.error is not None and error_type.__name__ in end.data.error
    assert session.derive_messages() == surface
    agent.followup(create_user_message(content="question 3", source={"kind": "user"}))
    await agent.when_idle()
    assert session.open_turn is None and session.derive_messages()[-1].role == "assistant"
    await agent.aclose()
