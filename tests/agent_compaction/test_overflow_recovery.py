"""A provider that answers 400 context-length-exceeded: the loop compacts maximally
once and sends the request again, over real HTTP to a server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from providers.frames import CHAT_DONE, chat_chunk, chat_usage
from providers.http_stub import Reply, StubServer, json_reply, sse_reply

from dsh_agent import AgentLoop, Compaction, reconstruct_requests
from dsh_agent.compaction import INSTRUCTION
from dsh_llm import create_user_message
from dsh_llm.providers import OpenAIChatAdapter
from dsh_session import (
    AssistantChunkEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    CompletedReason,
    ErrorReason,
    Session,
    TurnEndEvent,
    UserMessageEvent,
)

OVERFLOW = json_reply(
    400, {"error": {"message": "This model's maximum context length is 65536 tokens"}}
)


def text(words: str) -> Reply:
    return sse_reply(
        [
            chat_chunk({"role": "assistant", "content": words}),
            chat_chunk({}, finish_reason="stop"),
            chat_chunk(usage=chat_usage(40, 8)),
            CHAT_DONE,
        ]
    )


@pytest.fixture
async def stub() -> AsyncIterator[StubServer]:
    server = StubServer()
    await server.start()
    yield server
    await server.close()


def agent_over(stub: StubServer, session: Session) -> AgentLoop:
    adapter = OpenAIChatAdapter(
        base_url=f"{stub.url}/v1", api_key="test-key", provider="deepseek", max_retries=0
    )
    return AgentLoop(
        session=session,
        adapter=adapter,
        provider="deepseek",
        model="served-model",
        system="Be brief.",
        context_window=65_536,
        compaction=Compaction(),
    )


async def ask(agent: AgentLoop, words: str) -> None:
    agent.followup(create_user_message(content=words, source={"kind": "user"}))
    await agent.when_idle()


def texts(body: Any) -> list[str]:
    out = []
    for message in body["messages"]:
        content = message["content"]
        out.append(content if isinstance(content, str) else "".join(p["text"] for p in content))
    return out


async def test_a_context_overflow_is_compacted_and_the_request_sent_again(
    stub: StubServer,
) -> None:
    session = Session.create()
    agent = agent_over(stub, session)
    stub.script(
        text("first answer"),
        text("second answer"),
        OVERFLOW,
        text("Summary: two questions were answered."),
        text("third answer"),
    )
    await ask(agent, "first question " * 50)
    await ask(agent, "second question " * 50)
    await ask(agent, "third question")

    failed, summary, retried = stub.bodies[2:]
    # The summary request replays the failed request's prefix verbatim, then instructs.
    assert texts(summary)[:-1] == texts(failed)[:-1]
    assert texts(summary)[-1] == INSTRUCTION
    # The retry carries the checkpoint instead of all four earlier messages.
    assert len(texts(retried)) == len(texts(failed)) - 3
    assert "Summary: two questions were answered." in texts(retried)[1]
    assert texts(retried)[-1] == "third question"
    events = session.events
    ends = [e for e in events if isinstance(e, TurnEndEvent)]
    assert [type(e.data.reason) for e in ends] == [CompletedReason] * 3
    starts = [e for e in events if isinstance(e, CompactionStartEvent)]
    assert [e.data.turn for e in starts] == [3]
    # The failed attempt and the retry are both in the log; the log explains both.
    rebuilt = reconstruct_requests(events)
    assert [len(r.messages) for r in rebuilt] == [1, 3, 5, 2]
    checkpoint = next(
        e for e in events if isinstance(e, UserMessageEvent) and e.surface_op != "append"
    )
    assert rebuilt[-1].messages[0] is checkpoint.data
    chunks = [e for e in events if isinstance(e, AssistantChunkEvent) and e.data.turn == 3]
    assert chunks[0].data.chunk.type == "finish"
    await agent.aclose()


async def test_recovery_runs_once_then_the_turn_ends_with_the_overflow(stub: StubServer) -> None:
    session = Session.create()
    agent = agent_over(stub, session)
    stub.script(
        text("first answer"),
        text("second answer"),
        OVERFLOW,
        text("Summary: two questions were answered."),
        OVERFLOW,
    )
    await ask(agent, "first question " * 50)
    await ask(agent, "second question " * 50)
    await ask(agent, "third question")

    assert len(stub.bodies) == 5
    events = session.events
    last = [e for e in events if isinstance(e, TurnEndEvent)][-1]
    assert isinstance(last.data.reason, ErrorReason)
    assert last.data.reason.error.code == "CONTEXT_WINDOW_EXCEEDED"
    brackets = [e for e in events if isinstance(e, CompactionEndEvent)]
    assert len(brackets) == 1 and brackets[0].data.error is None
    await agent.aclose()


async def test_a_summary_request_that_overflows_too_is_retried_on_a_smaller_head(
    stub: StubServer,
) -> None:
    session = Session.create()
    agent = agent_over(stub, session)
    stub.script(
        text("first answer"),
        text("second answer"),
        OVERFLOW,  # the third question
        OVERFLOW,  # the summary of everything before it: nearly as large
        text("Summary: the first question."),  # the older half
        text("Summary: both questions."),  # that checkpoint and the rest
        text("third answer"),
    )
    await ask(agent, "first question " * 50)
    await ask(agent, "second question " * 50)
    await ask(agent, "third question")

    big, half, rest, retried = stub.bodies[3:]
    assert len(texts(big)) == 6 and len(texts(half)) == 4 and len(texts(rest)) == 5
    assert "Summary: the first question." in texts(rest)[1]
    assert len(texts(retried)) == 3 and "Summary: both questions." in texts(retried)[1]
    ends = [e for e in session.events if isinstance(e, CompactionEndEvent)]
    assert [e.data.error is None for e in ends] == [False, True, True]
    assert ends[0].data.error is not None and "CONTEXT_WINDOW_EXCEEDED" in ends[0].data.error
    last = [e for e in session.events if isinstance(e, TurnEndEvent)][-1]
    assert isinstance(last.data.reason, CompletedReason)
    await agent.aclose()
