"""Child process of the crash-mid-regenerate test, killed with SIGKILL by its parent.

Run as ``python -m agent_branching.regenerate_child BACKEND LOCATION WHERE`` from the
``tests`` directory. It stores one answered turn, prints ``session <id>``, then calls
``regenerate()`` and blocks for ever at WHERE: ``pre-step`` (before the replace is
written) or ``model`` (the model was called: the replace is durable). It prints WHERE
when it gets there, and the parent kills it.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from dsh_agent import AgentLoop, CallNext, PreStep, PreStepDecision
from dsh_llm import GenerateRequest, create_user_message
from dsh_llm.testing import FunctionAdapter, Response
from dsh_session import Session
from dsh_session.stores import JsonlSessionStore, SessionStore, SqliteSessionStore


def _announce(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def main(backend: str, location: Path, where: str) -> None:
    # Plain JSONL lines, so the parent can find the replace's line and cut inside it.
    store: SessionStore = (
        SqliteSessionStore(location)
        if backend == "sqlite"
        else JsonlSessionStore(location, compression="none")
    )
    calls = 0

    async def model(request: GenerateRequest) -> Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return "the first answer"
        _announce("model")
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def hold(step: PreStep, call_next: CallNext) -> PreStepDecision:
        if calls and where == "pre-step":
            _announce("pre-step")
            await asyncio.Event().wait()
        return await call_next()

    async with store:
        session = Session.create()
        agent = AgentLoop(
            session=session, adapter=FunctionAdapter(model), provider="p", model="m", store=store
        )
        agent.on_pre_step(hold)
        agent.followup(create_user_message(content="a question", source={"kind": "user"}))
        await agent.when_idle()
        _announce(f"session {session.id}")
        agent.regenerate()
        await agent.when_idle()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3]))
