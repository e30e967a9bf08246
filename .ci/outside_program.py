"""A user's program, type-checked by CI from a directory outside the repository.

It must pass mypy --strict and pyright after the README's install: the packages are
found through the install alone and their annotations (py.typed) are used.
"""

from dsh_agent import AgentLoop, tool
from dsh_llm import UserMessage, create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session


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


seq: int = build()[0].session.seq
