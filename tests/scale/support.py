"""What the scale tests share: a served turn with an instant model (the shape of the
bench's ``_instant.py``, kept here so tests never import the bench), and a session of
the long-session shape: streamed turns with a tool call each."""

from __future__ import annotations

from collections.abc import AsyncIterator

from dsh_agent import AgentLoop, tool
from dsh_agent import run as owned_run
from dsh_llm import (
    BlockEndChunk,
    FinishChunk,
    GenerateRequest,
    StopFinish,
    StreamChunk,
    TextBlock,
    TextDeltaChunk,
    ToolCallBlock,
    ToolCallsFinish,
    ToolResultMessage,
    create_user_message,
)
from dsh_session import Session
from dsh_session.stores import SessionStore

_CALL: tuple[StreamChunk, ...] = (
    BlockEndChunk(index=0, block=ToolCallBlock(call_id="c", name="add", arguments='{"a":1,"b":2}')),
    FinishChunk(reason=ToolCallsFinish()),
)
_ANSWER: tuple[StreamChunk, ...] = (
    TextDeltaChunk(index=0, text="1 + 2 "),
    TextDeltaChunk(index=0, text="= 3."),
    BlockEndChunk(index=0, block=TextBlock(text="1 + 2 = 3.")),
    FinishChunk(reason=StopFinish()),
)


class InstantModel:
    """Calls ``add`` when offered tools, then answers in two streamed deltas."""

    provider, model = "test", "instant"

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        wants_tool = request.tools and not isinstance(request.messages[-1], ToolResultMessage)
        for chunk in _CALL if wants_tool else _ANSWER:
            yield chunk


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


async def play_turns(session: Session, turns: int, store: SessionStore | None = None) -> None:
    """``turns`` tool turns on ``session`` by a loop that is closed afterwards."""
    model = InstantModel()
    async with AgentLoop(session=session, adapter=model, tools=[add], store=store) as agent:
        for turn in range(turns):
            prompt = create_user_message(content=f"question {turn}", source={"kind": "user"})
            await owned_run(agent, prompt)
