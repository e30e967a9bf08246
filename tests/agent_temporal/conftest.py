"""Fixtures of the Temporal tests: the run's dev server, a client, a scripted model
server, and a worker (in process, or a subprocess a test may SIGKILL)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from cli.openai_server import FakeOpenAIServer, fake_openai_server
from temporal_server import dev_server
from temporalio.client import Client
from temporalio.worker import Worker

from agent_temporal.scenario import WORKFLOWS, worker_agent

_TESTS = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    yield from dev_server()


@pytest.fixture
async def client(temporal_address: str) -> Client:
    return await Client.connect(temporal_address)


@pytest.fixture
def model_server() -> Iterator[FakeOpenAIServer]:
    with fake_openai_server() as server:
        yield server


@pytest.fixture
def task_queue() -> str:
    return f"dsh-test-{uuid.uuid4()}"


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'sessions.db'}"


@pytest.fixture(params=["sqlite", "postgres"])
def any_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The sessions' store: a SQLite file, or a schema of the run's PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sessions.db'}"
    dsn: str = request.getfixturevalue("postgres_dsn")
    return dsn


@pytest.fixture
def side_effects(tmp_path: Path) -> Path:
    folder = tmp_path / "effects"
    folder.mkdir()
    return folder


@asynccontextmanager
async def running_worker(
    client: Client, task_queue: str, server: FakeOpenAIServer, folder: Path
) -> AsyncIterator[Worker]:
    agent = worker_agent(server.base_url, folder)
    worker = Worker(
        client, task_queue=task_queue, workflows=list(WORKFLOWS), activities=agent.activities()
    )
    async with worker:
        yield worker


class WorkerProcess:
    """A worker subprocess; :meth:`kill` SIGKILLs it."""

    def __init__(self, address: str, task_queue: str, base_url: str, folder: Path) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(_TESTS.parent), str(_TESTS)])
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(_TESTS / "agent_temporal" / "worker_process.py"),
                *(address, task_queue, base_url, str(folder)),
            ],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.strip() == "ready", f"the worker did not start: {line!r}"

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def worker_processes(
    temporal_address: str, task_queue: str, model_server: FakeOpenAIServer, side_effects: Path
) -> Iterator[list[WorkerProcess]]:
    """Start workers with ``start()``; all are killed at the end."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        if worker.process.poll() is None:
            worker.kill()
