"""A user's program, type-checked by CI from a directory outside the repository.

It must pass mypy --strict and pyright after the README's install: the packages are
found through the install alone and their annotations (py.typed) are used.
"""

from typing import assert_type

from pydantic import BaseModel

from dsh_agent import (
    AgentLoop,
    AgentUpdate,
    LoopOpening,
    RunResult,
    SyncAgent,
    run,
    run_sync,
    tool,
)
from dsh_llm import UserMessage, create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session, ToolCallEvent


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def build() -> tuple[AgentLoop, UserMessage]:
    message: UserMessage = create_user_message(content="hi", source={"kind": "user"})
    agent = AgentLoop(
        session=Session.create(),
        adapter=ScriptedAdapter([reply(text="hello")]),
        provider="scripted",
        model="m",
        tools=[add],
    )
    return agent, message


def tool_names(session: Session) -> list[str]:
    """A narrowing read of the log: the type string selects the event's class."""
    names: list[str] = []
    for event in session.events:
        if event.type == "tool/call":
            assert_type(event, ToolCallEvent)
            names.append(event.data.name)
    return names


class Answer(BaseModel):
    value: int


async def typed_runs(agent: AgentLoop, message: UserMessage, chat: SyncAgent) -> None:
    """The three run entry points take one option set; ``output_type`` types the result."""
    assert_type(await run(agent, message, raise_on_error=False), RunResult[None])
    assert_type(await run(agent, message, output_type=Answer), RunResult[Answer])
    assert_type(run_sync(agent, message, settings=None), RunResult[None])
    assert_type(
        run_sync(agent, message, output_type=Answer, output_corrections=1), RunResult[Answer]
    )
    assert_type(chat.run(message), RunResult[None])
    assert_type(chat.run(message, output_type=Answer).output, Answer)


async def resumed() -> None:
    """Resume in one argument; the updates of whatever the agent does next."""
    opening = AgentLoop.open(
        adapter=ScriptedAdapter([reply(text="hello")]),
        provider="scripted",
        model="m",
        tools=[add],
        store="sqlite:///agent.db",
        session_id="chat-1",
    )
    assert_type(opening, LoopOpening[AgentLoop])
    async with opening as agent:
        assert_type(agent, AgentLoop)
        async with agent.updates(until_idle=True) as updates:
            agent.retry()
            async for update in updates:
                assert_type(update, AgentUpdate)


agent = build()[0]
seq: int = agent.session.seq
assert tool_names(agent.session) == []
