"""Approvals suite: what asking adds to a tool turn.

The tool turn of the agent suite (one call of ``add``, then a text answer, instant
model), with ``add`` offered as is and with ``add`` requiring approval, the call
approved as soon as the agent goes idle waiting (ask, idle, approve, resume). Played
in a new conversation and late in a long one: the gate reads only the open step back
from the log, so its cost must not grow with the conversation.
"""

from __future__ import annotations

import asyncio
import dataclasses

from _harness import Case, Options, compare
from _instant import QUESTION, TURNS_PER_CALL, InstantModel, Turn, add, batch
from agent import CONVERSATION

from dsh_agent import AgentLoop
from dsh_llm import create_user_message
from dsh_session import Session

SUITE = "approvals"
GATED_ADD = dataclasses.replace(add, requires_approval=True)


def _agent(*, gated: bool) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=InstantModel(),
        provider="bench",
        model="instant",
        tools=[GATED_ADD if gated else add],
    )


async def _turn(agent: AgentLoop) -> None:
    agent.followup(create_user_message(content=QUESTION, source={"kind": "user"}))
    await agent.when_idle()
    if agent.pending_approvals:
        await agent.approve(agent.pending_approvals[0].call_id)
        await agent.when_idle()
    assert agent.session.open_turn is None


def _new_conversation(*, gated: bool) -> Turn:
    async def turn() -> None:
        await _turn(_agent(gated=gated))

    return turn


def _late_in(agent: AgentLoop) -> Turn:
    async def turn() -> None:
        await _turn(agent)

    return turn


def run(options: Options) -> list[Case]:
    loop = asyncio.new_event_loop()
    try:
        fresh = compare(
            {
                "dsh, plain tool": batch(loop, _new_conversation(gated=False)),
                "dsh, tool requiring approval": batch(loop, _new_conversation(gated=True)),
            },
            number=5,
            repeats=options.repeats(20),
        )
        plain, gated = _agent(gated=False), _agent(gated=True)
        for agent in (plain, gated):
            for _ in range(options.repeats(CONVERSATION)):
                loop.run_until_complete(_turn(agent))
        late = compare(
            {
                "dsh, plain tool": batch(loop, _late_in(plain)),
                "dsh, tool requiring approval": batch(loop, _late_in(gated)),
            },
            number=1,
            repeats=options.repeats(10),
        )
    finally:
        loop.close()
    return [
        Case(
            suite=SUITE,
            name="tool turn, new conversation: plain tool vs approved at once",
            unit="s",
            values={name: value / TURNS_PER_CALL for name, value in fresh.items()},
            notes="approval adds approval/asked + approval/decided and one idle/resume",
        ),
        Case(
            suite=SUITE,
            name=f"tool turn after {CONVERSATION}+ turns: plain tool vs approved at once",
            unit="s",
            values={name: value / TURNS_PER_CALL for name, value in late.items()},
            notes="the gate reads the open step only: no growth with the conversation",
        ),
    ]
