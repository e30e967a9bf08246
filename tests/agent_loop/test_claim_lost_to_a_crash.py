"""A turn claims its input, flushes, then runs its pre-step handlers: a process killed
there left the claim durable and the message nowhere (not pending, never delivered),
so the user's prompt was lost on the next load. The inbox now gives such a claim back:
the message is pending again, once, and the next turn answers it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

from dsh_agent import AgentLoop, run
from dsh_llm.testing import ScriptedAdapter
from dsh_session import SqliteSessionStore, TurnEndEvent, UserMessageEvent

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from dsh_agent import AgentLoop
    from dsh_llm import create_user_message
    from dsh_llm.testing import ScriptedAdapter
    from dsh_session import Session, SqliteSessionStore

    db, marker = sys.argv[1], Path(sys.argv[2])

    async def stuck(step, call_next):
        marker.write_text(step.messages[0].id)  # the claim is durable by now
        await asyncio.sleep(3600)

    async def main():
        async with SqliteSessionStore(db) as store:
            session = Session.create(id="claimed")
            store.attach(session)
            agent = AgentLoop(session=session, adapter=ScriptedAdapter(["never"]),
                              provider="test", model="scripted", store=store)
            agent.on_pre_step(stuck)
            agent.followup(create_user_message("keep me"))
            await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


def test_a_prompt_claimed_when_the_process_died_is_pending_again(tmp_path: Path) -> None:
    db, marker = tmp_path / "agent.db", tmp_path / "claimed"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db), str(marker)])
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, "the child process ended early"
            assert time.monotonic() < deadline, "the pre-step was never reached"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    prompt_id = marker.read_text()

    async def resume() -> tuple[Sequence[str], Sequence[str], Sequence[str]]:
        async with SqliteSessionStore(db) as store:
            session = await store.load("claimed")
            agent = AgentLoop(
                session=session,
                adapter=ScriptedAdapter(["kept", "answered"]),
                provider="test",
                model="scripted",
                store=store,
            )
            pending = [message.id for message in agent.inbox.next_turn]
            result = await run(agent, "and then")
            await agent.aclose()
            delivered = [e.data.id for e in session.events if isinstance(e, UserMessageEvent)]
            ends = [e.data.reason.kind for e in session.events if isinstance(e, TurnEndEvent)]
            assert result.final_response == "answered"
            return pending, delivered, ends

    pending, delivered, ends = asyncio.run(resume())
    assert pending == [prompt_id]
    assert delivered[0] == prompt_id and delivered.count(prompt_id) == 1
    assert ends[0] == "interrupted"
