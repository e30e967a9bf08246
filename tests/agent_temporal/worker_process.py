"""A Temporal worker in its own process, for the tests that SIGKILL one:
``python worker_process.py ADDRESS TASK_QUEUE BASE_URL FOLDER``. It prints ``ready``
once it polls the task queue."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from agent_temporal.scenario import WORKFLOWS, worker_agent


async def main(address: str, task_queue: str, base_url: str, folder: str) -> None:
    client = await Client.connect(address)
    agent = worker_agent(base_url, Path(folder))
    async with Worker(
        client, task_queue=task_queue, workflows=list(WORKFLOWS), activities=agent.activities()
    ):
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
