"""The relay on its own, over a real loop: each delta reaches the session's listeners
as its chunk is appended, with the attempt's start in the log; a listener that joins
mid-reply gets the text so far; a failed attempt's id is remembered by its finish
chunk's seq; nothing is kept for a session once its listeners left and its attempts
ended; a connection's read-ahead of the log is bounded."""

from __future__ import annotations

import asyncio

from dsh_agent import AgentLoop
from dsh_agent.web._relay import FAILURES_KEPT, LiveRelay, LiveText
from dsh_agent.web._stream import MAX_BACKLOG, _Inbox
from dsh_llm import MessageId, create_user_message
from dsh_llm.testing import FunctionAdapter
from dsh_session import Session
from dsh_session.events import AssistantChunkEvent, AssistantMessageEvent, StepStartEvent

from . import live_agents


async def test_deltas_reach_listeners_as_chunks_are_appended() -> None:
    relay = LiveRelay()
    loop = AgentLoop(
        session=Session.create(),
        adapter=FunctionAdapter(lambda request: live_agents.REPLY, delay=0.01),
        provider="test",
        model="scripted",
    )
    relay.watch(loop)
    heard: list[LiveText] = []
    seqs: list[int] = []
    so_far, stop = relay.listen(loop.id, heard.append)
    assert so_far == []
    loop.session.subscribe(lambda event: seqs.append(event.seq))
    joined: list[LiveText] = []
    loop.followup(create_user_message("hi"))
    while len(heard) < 3:
        await asyncio.sleep(0.005)
    late, stop_late = relay.listen(loop.id, joined.append)
    await loop.when_idle()
    events = loop.session.events
    [committed] = [e for e in events if isinstance(e, AssistantMessageEvent)]
    text = committed.data.message.content[0].text  # type: ignore[union-attr]
    assert "".join(h.text for h in heard) == text
    assert {h.message_id for h in heard} == {committed.data.message.id}
    chunk_seqs = [e.seq for e in events if isinstance(e, AssistantChunkEvent)]
    assert [h.seq for h in heard] == [s for s in chunk_seqs if s in {h.seq for h in heard}]
    step = next(e for e in events if isinstance(e, StepStartEvent))
    assert all(h.floor == chunk_seqs[0] > step.seq for h in heard)  # the attempt's start
    assert "".join(t.text for t in late) + "".join(j.text for j in joined) == text
    assert len(late) == 1  # the text so far, once
    assert relay.sessions == 1
    stop()
    stop_late()
    assert relay.sessions == 0  # nothing kept for a session nobody watches
    await loop.aclose()


async def test_a_failed_attempt_is_remembered_by_its_finish_seq() -> None:
    relay = LiveRelay()
    loop = live_agents.fails_then_answers(Session.create(), None)  # type: ignore[arg-type]
    relay.watch(loop)
    heard: list[LiveText] = []
    relay.listen(loop.id, heard.append)
    loop.followup(create_user_message("hi"))
    await loop.when_idle()
    failed_id = heard[0].message_id
    finishes = [
        e.seq
        for e in loop.session.events
        if isinstance(e, AssistantChunkEvent) and e.data.chunk.type == "finish"
    ]
    assert relay.failed_message(loop.id, finishes[0]) == failed_id
    assert relay.failed_message(loop.id, finishes[1]) is None  # that one succeeded
    assert FAILURES_KEPT >= 1024
    await loop.aclose()


async def test_a_connection_reads_a_bounded_part_of_the_log_ahead() -> None:
    inbox = _Inbox()
    session = Session.create()
    event = session.append("user/message", create_user_message("hi"))
    for _ in range(MAX_BACKLOG):
        assert inbox.room.is_set()
        inbox.put(event)
    assert not inbox.room.is_set()  # the follow task waits here
    inbox.put(LiveText(MessageId("m"), "x", False, 1, 1))  # live text is never held back
    await inbox.get(1.0)
    assert inbox.room.is_set()
