"""The README's 15-line agent on a real model: DeepSeek by default, any OpenAI-compatible
server through DEEPSEEK_BASE_URL. Run: DEEPSEEK_API_KEY=sk-... python examples/real_provider.py"""

import asyncio
import os
import sys

from dsh_agent import AgentLoop, TurnFailed, run, tool
from dsh_llm.providers import OpenAIChatAdapter
from dsh_session import Session


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


async def main() -> None:
    adapter = OpenAIChatAdapter(provider="deepseek", base_url=os.getenv("DEEPSEEK_BASE_URL"))
    agent = AgentLoop(
        session=Session.create(),
        adapter=adapter,
        provider="deepseek",
        model="deepseek-chat",
        tools=[add],
    )
    try:
        result = await run(agent, "What is 1234 + 4321?")  # transient failures are retried
    except TurnFailed as failed:  # e.g. could not connect to URL: connection refused
        sys.exit(f"error: {failed}")
    print(result.final_response)


if __name__ == "__main__":
    asyncio.run(main())
