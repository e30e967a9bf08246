"""Issue 34 #8: a long retry sequence never overflows the backoff. The 1025th retry
computed ``2.0 ** 1024`` (``OverflowError``, failure code ``UNKNOWN``); the delay must
stay capped at ``max_delay_ms`` however many retries the policy allows."""

from __future__ import annotations

from dsh_agent import AgentLoop, RetryPolicy, run
from dsh_llm import LlmFailure, create_user_message
from dsh_llm.testing import ScriptedAdapter
from dsh_session import LlmRetryEvent, Session


async def test_retry_1025_and_beyond_waits_the_capped_delay() -> None:
    retries = 1030
    failure = LlmFailure(message="down", code="SERVER")
    agent = AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([*([failure] * retries), "ok"]),
        provider="p",
        model="m",
        retry=RetryPolicy(max_retries=3000, initial_delay_ms=1, max_delay_ms=1, jitter_ratio=0),
    )
    result = await run(agent, create_user_message(content="hi", source={"kind": "user"}))
    assert result.final_response == "ok"
    scheduled = [e.data for e in result.events if isinstance(e, LlmRetryEvent)]
    assert [s.retry for s in scheduled] == list(range(1, retries + 1))
    assert {s.delay_ms for s in scheduled} == {1}  # the cap, every time
    await agent.aclose()
