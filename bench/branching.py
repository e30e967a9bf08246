"""Branching suite: what ``regenerate()`` and ``edit()`` cost over a plain followup.

An in-memory conversation of N turns (instant model, a short text answer each). Each
subject runs one turn: a followup with a new prompt; ``regenerate()`` of the last
answer (one surface replace, then the turn); and ``edit()`` of the last prompt (a fork
of the whole log before its turn, validated as a seed, a new loop, the turn).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from _harness import CPU_CLOCK, Case, Options, Target, compare

from dsh_agent import AgentLoop
from dsh_llm import UserMessage, create_user_message
from dsh_llm.testing import FunctionAdapter
from dsh_session import Session

SUITE = "branching"


def _prompt(text: str) -> UserMessage:
    return create_user_message(content=text, source={"kind": "user"})


def _agent(session: Session) -> AgentLoop:
    adapter = FunctionAdapter(lambda request: "a short answer of a few words")
    return AgentLoop(session=session, adapter=adapter, provider="bench", model="instant")


def _conversation(loop: asyncio.AbstractEventLoop, turns: int) -> AgentLoop:
    agent = _agent(Session.create())

    async def build() -> None:
        for number in range(turns):
            agent.followup(_prompt(f"question {number}"))
            await agent.when_idle()

    loop.run_until_complete(build())
    return agent


def _subjects(loop: asyncio.AbstractEventLoop, turns: int) -> dict[str, Callable[[], None]]:
    followed = _conversation(loop, turns)
    regenerated = _conversation(loop, turns)
    edited = _conversation(loop, turns)
    last_prompt = next(m.id for m in reversed(edited.session.derive_messages()) if m.role == "user")

    async def followup() -> None:
        followed.followup(_prompt("one more"))
        await followed.when_idle()

    async def regenerate() -> None:
        regenerated.regenerate()
        await regenerated.when_idle()

    async def edit() -> None:
        branch = await edited.edit(last_prompt, "said differently")
        await branch.when_idle()
        await branch.aclose()

    return {
        "followup": lambda: loop.run_until_complete(followup()),
        "regenerate": lambda: loop.run_until_complete(regenerate()),
        "edit (fork + new loop)": lambda: loop.run_until_complete(edit()),
    }


def run(options: Options) -> list[Case]:
    loop = asyncio.new_event_loop()
    cases = []
    try:
        for turns in (20, 100) if options.quick else (20, 500):
            values = compare(
                _subjects(loop, turns),
                number=5,
                repeats=options.repeats(20),
                clock=CPU_CLOCK,
            )
            cases.append(
                Case(
                    SUITE,
                    f"one turn after {turns} turns, in memory",
                    "s",
                    values,
                    targets=(Target("followup", 1.5, subject="regenerate"),),
                    clock="cpu",
                    notes=(
                        "regenerate's replace makes the next derivation rebuild the history "
                        "(O(history), in C) and checks pairing over the replaced tail; edit "
                        "forks the log before the prompt's turn, O(log)"
                    ),
                )
            )
    finally:
        loop.close()
    return cases
