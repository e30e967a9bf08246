"""A durable conversation that every run resumes: a tool, a model string, a string
prompt, a SQLite store, one session id. Run: DEEPSEEK_API_KEY=sk-... python
examples/resume.py "What is 1234 + 4321?" (DSH_MODEL names another model string)."""

import asyncio
import os
import sys

from dsh_agent import AgentLoop, run, tool


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


async def main(prompt: str) -> None:
    model = os.getenv("DSH_MODEL", "deepseek:deepseek-chat")
    async with AgentLoop.open(
        model=model, tools=[add], store="sqlite:///agent.db", session_id="chat-1"
    ) as agent:
        print((await run(agent, prompt)).final_response)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
