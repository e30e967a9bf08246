"""The README's first agent, on a real model: DeepSeek by default (the key in
DEEPSEEK_API_KEY; DEEPSEEK_BASE_URL moves the endpoint). Run: DEEPSEEK_API_KEY=sk-...
python examples/real_provider.py"""

import asyncio
import sys

from dsh_agent import AgentLoop, TurnFailed, run, tool


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


async def main() -> None:
    async with AgentLoop(model="deepseek:deepseek-chat", tools=[add]) as agent:
        try:
            result = await run(agent, "What is 1234 + 4321?")  # transient failures are retried
        except TurnFailed as failed:  # e.g. could not connect to URL: connection refused
            sys.exit(f"error: {failed}")
        print(result.final_response)


if __name__ == "__main__":
    asyncio.run(main())
