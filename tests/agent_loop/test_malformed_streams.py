"""Malformed model streams: the attempt ends once, and the log still explains it.

Each stream is played by a scripted adapter exactly as given. For each one the test
checks the log (the chunks logged, one finish per attempt), the derived history (no
text from after the finish) and that ``reconstruct_requests`` rebuilds exactly the
requests the adapter received.
"""

from __future__ import annotations

from typing import Any

from dsh_agent import AgentLoop, reconstruct_requests
from dsh_agent._engine.step import INCOMPLETE_STREAM, MALFORMED_STREAM
from dsh_llm import TextBlock
from dsh_llm.testing import ScriptedAdapter
from dsh_session import AssistantChunkEvent, AssistantMessageEvent, TurnEndEvent

from .support import AgentFactory, fixed

TEXT = {"type": "text-delta", "index": 0, "text": "hello"}
STOP = {"type": "finish", "reason": {"kind": "stop"}}


async def play(make_agent: AgentFactory, *responses: Any) -> tuple[AgentLoop, ScriptedAdapter]:
    """One followup per response, each in a turn of its own."""
    adapter = ScriptedAdapter(list(responses))
    agent = make_agent(adapter)
    for number in range(len(responses)):
        agent.followup(fixed(f"m{number}", "hi"))
        await agent.when_idle()
    return agent, adapter


def chunk_types(agent: AgentLoop) -> list[str]:
    return [e.data.chunk.type for e in agent.session.events if isinstance(e, AssistantChunkEvent)]


def turn_end(agent: AgentLoop) -> Any:
    ends = [e.data.reason for e in agent.session.events if isinstance(e, TurnEndEvent)]
    return ends[-1]


def answers(agent: AgentLoop) -> list[str]:
    return [
        "".join(block.text for block in e.data.message.content if isinstance(block, TextBlock))
        for e in agent.session.events
        if isinstance(e, AssistantMessageEvent)
    ]


def assert_requests_rebuilt(agent: AgentLoop, adapter: ScriptedAdapter) -> None:
    assert reconstruct_requests(agent.session.events) == adapter.requests


async def test_chunks_after_the_finish_are_not_read(make_agent: AgentFactory) -> None:
    late = {"type": "text-delta", "index": 0, "text": " and more"}
    agent, adapter = await play(make_agent, [TEXT, STOP, late], "next turn")
    assert chunk_types(agent)[:2] == ["text-delta", "finish"]
    assert chunk_types(agent)[2] != "text-delta"  # the late delta was never logged
    assert answers(agent) == ["hello", "next turn"]
    history = agent.session.derive_messages()
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
    assert_requests_rebuilt(agent, adapter)
    assert len(adapter.requests) == 2


async def test_a_second_finish_does_not_change_the_first(make_agent: AgentFactory) -> None:
    failed = {
        "type": "finish",
        "reason": {"kind": "error", "failure": {"message": "x", "code": "X"}},
    }
    agent, adapter = await play(make_agent, [TEXT, STOP, failed])
    assert chunk_types(agent) == ["text-delta", "finish"]
    assert turn_end(agent).kind == "completed"
    assert answers(agent) == ["hello"]
    assert_requests_rebuilt(agent, adapter)


async def test_an_error_raised_after_the_finish_is_never_seen(make_agent: AgentFactory) -> None:
    agent, adapter = await play(make_agent, [TEXT, STOP, ConnectionResetError("late")])
    assert chunk_types(agent) == ["text-delta", "finish"]
    assert turn_end(agent).kind == "completed"
    assert_requests_rebuilt(agent, adapter)


async def test_a_block_that_cannot_be_assembled_fails_the_attempt_once(
    make_agent: AgentFactory,
) -> None:
    # An image block is only ever carried whole by a block-end; this one never closes.
    start = {"type": "block-start", "index": 0, "blockType": "image"}
    agent, adapter = await play(make_agent, [start, STOP], "next turn")
    assert chunk_types(agent)[:2] == ["block-start", "finish"]
    ends = [e.data.reason for e in agent.session.events if isinstance(e, TurnEndEvent)]
    assert ends[0].kind == "error" and ends[0].error.code == MALFORMED_STREAM
    assert answers(agent) == ["next turn"]  # the failed attempt left no message
    assert_requests_rebuilt(agent, adapter)


async def test_a_chunk_that_does_not_fit_its_block_fails_the_attempt(
    make_agent: AgentFactory,
) -> None:
    reasoning = {"type": "reasoning-delta", "index": 0, "text": "hmm"}
    agent, adapter = await play(make_agent, [reasoning, TEXT, STOP])
    # the refused chunk is logged as it came, then one error finish ends the attempt
    assert chunk_types(agent) == ["reasoning-delta", "text-delta", "finish"]
    reason = turn_end(agent)
    assert reason.kind == "error" and reason.error.code == MALFORMED_STREAM
    assert "block 0" in reason.error.message
    assert answers(agent) == []
    assert_requests_rebuilt(agent, adapter)


async def test_a_stream_without_a_finish_is_a_failed_attempt(make_agent: AgentFactory) -> None:
    agent, adapter = await play(make_agent, [TEXT], "next turn")
    assert chunk_types(agent)[:2] == ["text-delta", "finish"]
    ends = [e.data.reason for e in agent.session.events if isinstance(e, TurnEndEvent)]
    assert ends[0].kind == "error" and ends[0].error.code == INCOMPLETE_STREAM
    assert answers(agent) == ["next turn"]
    assert_requests_rebuilt(agent, adapter)


async def test_an_empty_stream_is_a_failed_attempt_the_log_still_explains(
    make_agent: AgentFactory,
) -> None:
    agent, adapter = await play(make_agent, [], "next turn")
    assert chunk_types(agent)[0] == "finish"
    ends = [e.data.reason for e in agent.session.events if isinstance(e, TurnEndEvent)]
    assert ends[0].kind == "error" and ends[0].error.code == INCOMPLETE_STREAM
    assert_requests_rebuilt(agent, adapter)
    assert len(adapter.requests) == 2
