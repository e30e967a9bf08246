"""Summary attempts: a failed, cancelled or non-shrinking one closes its bracket with
an error and leaves the surface as it was; a good one lands; the summarizer can be a
user function or another model; ``compact_now`` works between turns."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsh_agent import AgentError, AgentLoop, Compaction, ModelSummarizer, SummarizationInput
from dsh_llm import GenerateRequest, create_user_message
from dsh_llm.testing import FunctionAdapter, ScriptedAdapter
from dsh_session import (
    AbortedReason,
    CompactionEndEvent,
    CompactionStartEvent,
    CompactionSummaryEvent,
    CompletedReason,
    RequestContextEvent,
    Session,
    TurnEndEvent,
)

from .support import check_summaries, is_summary_request

WINDOW = 500  # threshold 400: the fourth question's pre-step crosses it


def chatty(request: GenerateRequest) -> str:
    return "ok " if is_summary_request(request) else "answer " * 40


def agent_with(session: Session, adapter: Any = None, **compaction: Any) -> AgentLoop:
    return AgentLoop(
        session=session,
        adapter=adapter or FunctionAdapter(chatty),
        provider="test",
        model="test-model",
        context_window=WINDOW,
        compaction=Compaction(**compaction),
    )


async def ask(agent: AgentLoop, n: int) -> None:
    agent.followup(create_user_message(content=f"question {n} " * 20, source={"kind": "user"}))
    await agent.when_idle()


def brackets(session: Session) -> list[CompactionEndEvent]:
    return [e for e in session.events if isinstance(e, CompactionEndEvent)]


async def test_pressure_summarizes_the_head_and_keeps_a_tail() -> None:
    session = Session.create()
    agent = agent_with(session)
    for n in range(1, 5):
        await ask(agent, n)
    (end,) = brackets(session)
    assert end.data.error is None and end.data.turn == 4
    assert check_summaries(session.events) == 1
    first = session.derive_messages()[0]
    assert first.source.kind == "plugin" and "ok" in str(first.content)
    assert len(session.derive_messages()) < 8
    await agent.aclose()


async def test_a_failing_summarizer_leaves_the_surface_untouched() -> None:
    async def broken(source: SummarizationInput) -> str:
        raise RuntimeError("summarizer is down")

    session = Session.create()
    agent = agent_with(session, summarizer=broken, extra_summaries=0)
    for n in range(1, 4):
        await ask(agent, n)
    before = session.surface.seqs
    await ask(agent, 4)
    (end,) = brackets(session)
    assert end.data.error is not None and "summarizer is down" in end.data.error
    assert not any(isinstance(e, CompactionSummaryEvent) for e in session.events)
    assert session.surface.seqs[: len(before)] == before  # only the new turn appended
    assert session.surface.generation == 0
    ends = [e for e in session.events if isinstance(e, TurnEndEvent)]
    assert isinstance(ends[-1].data.reason, CompletedReason)  # the turn went on
    await agent.aclose()


async def test_a_summary_that_does_not_shrink_its_source_is_rejected() -> None:
    async def verbose(source: SummarizationInput) -> str:
        return "every detail, again and again. " * 500

    session = Session.create()
    agent = agent_with(session, summarizer=verbose, extra_summaries=0)
    for n in range(1, 5):
        await ask(agent, n)
    (end,) = brackets(session)
    assert end.data.error is not None and "does not shrink its source" in end.data.error
    assert session.surface.generation == 0
    await agent.aclose()


async def test_a_cancel_during_summarization_closes_the_bracket() -> None:
    started = asyncio.Event()

    async def stuck(source: SummarizationInput) -> str:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    session = Session.create()
    agent = agent_with(session, summarizer=stuck)
    for n in range(1, 4):
        await ask(agent, n)
    agent.followup(create_user_message(content="question 4 " * 20, source={"kind": "user"}))
    await asyncio.wait_for(started.wait(), 30)
    agent.cancel()
    await agent.when_idle()
    (end,) = brackets(session)
    assert end.data.error is not None and "CancelledError" in end.data.error
    assert session.surface.generation == 0
    last = [e for e in session.events if isinstance(e, TurnEndEvent)][-1]
    assert isinstance(last.data.reason, AbortedReason)
    assert session.events[end.seq + 1] is last  # the bracket closed inside its turn
    await agent.aclose()


async def test_another_model_can_summarize() -> None:
    other = ScriptedAdapter(["Short summary."])
    session = Session.create()
    conversation = FunctionAdapter(chatty)
    summarizer = ModelSummarizer(other, provider="cheap", model="cheap-small", max_tokens=256)
    agent = agent_with(session, conversation, summarizer=summarizer)
    for n in range(1, 5):
        await ask(agent, n)
    (summary,) = [e for e in session.events if isinstance(e, CompactionSummaryEvent)]
    assert (summary.data.provider, summary.data.model) == ("cheap", "cheap-small")
    assert summary.data.max_tokens == 256 and summary.data.llm_stream_call is True
    assert summary.data.raw_output is not None
    (request,) = other.requests
    assert request.system is None and request.messages[-1].source.kind == "plugin"
    assert not any(is_summary_request(r) for r in conversation.requests)
    await agent.aclose()


async def test_compact_now_between_turns_is_a_standalone_bracket() -> None:
    session = Session.create()
    agent = agent_with(session)
    await ask(agent, 1)
    await ask(agent, 2)
    result = await agent.compact_now()
    assert result is not None
    (start,) = [e for e in session.events if isinstance(e, CompactionStartEvent)]
    assert start.data.turn is None and start.seq == result.start_seq
    summary = session.events[result.summary_seq]
    assert isinstance(summary, CompactionSummaryEvent)
    assert result.shadowed_seqs == summary.data.shadowed_seqs
    assert len(session.derive_messages()) == 2  # the checkpoint and the last answer
    await ask(agent, 3)
    assert [type(e.data.reason) for e in session.events if isinstance(e, TurnEndEvent)] == [
        CompletedReason
    ] * 3
    await agent.aclose()


async def test_a_send_during_compact_now_starts_its_turn_afterwards() -> None:
    release = asyncio.Event()

    async def slow(source: SummarizationInput) -> str:
        await release.wait()
        return "brief"

    session = Session.create()
    agent = agent_with(session, summarizer=slow)
    await ask(agent, 1)
    await ask(agent, 2)
    compacting = asyncio.ensure_future(agent.compact_now())
    await asyncio.sleep(0)
    agent.followup(create_user_message(content="question 3", source={"kind": "user"}))
    assert agent.status == "idle" and session.open_turn is None
    release.set()
    await compacting
    await agent.when_idle()
    types = [e.type for e in session.events]
    assert types.index("compaction/end") < len(types) - 1 - types[::-1].index("turn/start")
    await agent.aclose()


async def test_compact_now_needs_a_policy_and_an_idle_agent() -> None:
    plain = AgentLoop(
        session=Session.create(), adapter=ScriptedAdapter([]), provider="t", model="m"
    )
    with pytest.raises(ValueError, match="compaction=Compaction"):
        await plain.compact_now()
    await plain.aclose()
    release = asyncio.Event()

    async def slow(request: GenerateRequest) -> str:
        await release.wait()
        return "done"

    agent = agent_with(Session.create(), FunctionAdapter(slow))
    agent.followup(create_user_message(content="hi", source={"kind": "user"}))
    with pytest.raises(AgentError, match="idle"):
        await agent.compact_now()
    release.set()
    await agent.aclose()


async def test_request_context_is_logged_when_the_route_or_window_changes() -> None:
    session = Session.create()
    agent = agent_with(session)
    await ask(agent, 1)
    await ask(agent, 2)
    await agent.aclose()
    again = AgentLoop(
        session=session,
        adapter=FunctionAdapter(chatty),
        provider="test",
        model="test-model",
        context_window=WINDOW,
    )
    await ask(again, 3)
    await again.aclose()
    other = AgentLoop(
        session=session, adapter=FunctionAdapter(chatty), provider="test", model="deepseek-chat"
    )
    await ask(other, 4)
    await other.aclose()
    contexts = [e.data for e in session.events if isinstance(e, RequestContextEvent)]
    assert [(c.model, c.context_window) for c in contexts] == [
        ("test-model", WINDOW),
        ("deepseek-chat", 131_072),  # from the known-models table
    ]
