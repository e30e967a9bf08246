"""A program that resumes one conversation in one argument, for the two-process tests.

``python resume_child.py STORE_URL SESSION_ID MODEL PROMPT [hold]`` opens the session
(``-`` for a new one) with ``AgentLoop.open``, runs ``PROMPT`` and prints one JSON
line: the session id, the answer and the prompt's id. The model answers with every
prompt it was sent so far, so the answer shows what the resumed history holds. With
``hold`` it then keeps the session open until a line arrives on stdin.
"""

from __future__ import annotations

import asyncio
import json
import sys

from dsh_agent import AgentLoop, run, tool
from dsh_llm import GenerateRequest, TextBlock, UserMessage
from dsh_llm.testing import FunctionAdapter


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def recite(request: GenerateRequest) -> str:
    prompts = [
        "".join(block.text for block in message.content if isinstance(block, TextBlock))
        for message in request.messages
        if isinstance(message, UserMessage)
    ]
    return " | ".join(prompts)


async def main(url: str, session_id: str, model: str, prompt: str, hold: bool) -> None:
    async with AgentLoop.open(
        store=url,
        session_id=None if session_id == "-" else session_id,
        adapter=FunctionAdapter(recite),
        provider="test",
        model=model,
        tools=[add],
    ) as agent:
        result = await run(agent, prompt)
        line = {"id": agent.id, "answer": result.final_response, "prompt": result.message_id}
        print(json.dumps(line), flush=True)
        if hold:
            await asyncio.to_thread(sys.stdin.readline)


if __name__ == "__main__":
    url, session_id, model, prompt = sys.argv[1:5]
    asyncio.run(main(url, session_id, model, prompt, sys.argv[5:] == ["hold"]))
