"""A tool-using agent on a real model (DeepSeek by default; any OpenAI-compatible server
through DEEPSEEK_BASE_URL). Run: DEEPSEEK_API_KEY=sk-... python examples/real_provider.py"""

import asyncio
import os
from datetime import date

from dsh_agent import AgentLoop, run, tool
from dsh_llm import create_user_message
from dsh_llm.providers import OpenAIChatAdapter
from dsh_session import Session


@tool
async def days_until(day: str) -> str:
    """Days from today until a date given as YYYY-MM-DD."""
    return str((date.fromisoformat(day) - date.today()).days)


async def main() -> None:
    agent = AgentLoop(
        session=Session.create(),
        adapter=OpenAIChatAdapter(provider="deepseek", base_url=os.getenv("DEEPSEEK_BASE_URL")),
        provider="deepseek",
        model="deepseek-chat",
        system="You are a concise assistant.",
        tools=[days_until],
    )
    question = create_user_message(
        content="How many days until 2030-01-01?", source={"kind": "user"}
    )
    print((await run(agent, question)).final_response)


if __name__ == "__main__":
    asyncio.run(main())
