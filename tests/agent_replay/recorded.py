"""A conversation recorded with dsh: a tool-using agent whose long answers make it
compact, driven by a scripted model; the factory is "today's code" for the replays."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from dsh_agent import AgentLoop, Compaction, PreStepHandler, tool
from dsh_agent.compaction import INSTRUCTION
from dsh_llm import GenerateRequest, ModelAdapter, TextBlock, ToolResultMessage, create_user_message
from dsh_llm.testing import FunctionAdapter, Reply
from dsh_session import Session

SYSTEM = "You are a careful assistant. Use the tools."
WINDOW = 900


@tool
async def lookup(topic: str) -> str:
    """Look a topic up in the encyclopedia."""
    return f"The encyclopedia says {topic} is " + "interesting " * 30


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@dataclass(frozen=True)
class Code:
    """What "today's code" may change between recording and replay."""

    system: str = SYSTEM
    tools: tuple[object, ...] = (lookup, add)
    threshold_ratio: float = 0.8
    pre_step: tuple[PreStepHandler, ...] = ()

    def factory(self) -> Callable[[Session, ModelAdapter], AgentLoop]:
        def build(session: Session, adapter: ModelAdapter) -> AgentLoop:
            return AgentLoop(
                session=session,
                adapter=adapter,
                provider="test",
                model="scripted",
                system=self.system,
                tools=self.tools,  # type: ignore[arg-type]
                context_window=WINDOW,
                compaction=Compaction(threshold_ratio=self.threshold_ratio),
                pre_step=self.pre_step,
            )

        return build

    def but(self, **changes: object) -> Code:
        return replace(self, **changes)  # type: ignore[arg-type]


def scripted_model(request: GenerateRequest) -> str | Reply:
    """Looks each prompt's topic up, adds two numbers for 'sum' prompts, then answers."""
    last = request.messages[-1]
    if last.content == (TextBlock(text=INSTRUCTION),):
        return f"Checkpoint: {len(request.messages) - 1} messages about topics."
    if isinstance(last, ToolResultMessage):
        return "Here is what I found. " + "detail " * 25
    text = str(last.content[0].text)  # type: ignore[union-attr]
    number = len(request.messages)
    if text.startswith("sum"):
        return Reply(
            tool_calls=({"call_id": f"add-{number}", "name": "add", "arguments": {"a": 2, "b": 3}},)
        )
    topic = text.split()[-1]
    return Reply(
        tool_calls=({"call_id": f"look-{number}", "name": "lookup", "arguments": {"topic": topic}},)
    )


PROMPTS = (
    "tell me about zebras",
    "sum two and three",
    "tell me about okapis",
    "tell me about tapirs",
    "tell me about lemurs",
)


async def record(code: Code = Code()) -> Session:
    """The recorded session: five prompts, each answered after one tool call."""
    session = Session.create()
    agent = code.factory()(session, FunctionAdapter(scripted_model))
    for prompt in PROMPTS:
        agent.followup(create_user_message(content=prompt, source={"kind": "user"}))
        await agent.when_idle()
    await agent.aclose()
    return session
