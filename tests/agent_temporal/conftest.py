"""Fixtures of the Temporal tests: the run's dev server, a client, a scripted model
server, and a worker (in process, or a subprocess a test may SIGKILL), bundled for a
test as one :class:`Rig`."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

import pytest
from cli.openai_server import FakeOpenAIServer, fake_openai_server
from temporal_server import dev_server
from temporalio.client import Client
from temporalio.worker import Worker

from agent_temporal.checks import assert_log_rebuilds_the_wire_requests, stored_session
from agent_temporal.scenario import AGENT_NAME, WORKFLOWS, worker_agent
from dsh_agent.temporal import TemporalAgent
from dsh_session import Session

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


@dataclass(frozen=True)
class Rig:
    """One test's dev server (``client``, ``address``), task queue, scripted model server,
    side-effect folder and store, with what the tests do with them."""

    client: Client
    address: str
    task_queue: str
    model: FakeOpenAIServer
    effects: Path
    store_url: str

    def worker(self) -> AbstractAsyncContextManager[Worker]:
        """An in-process worker serving the test's task queue."""
        return running_worker(self.client, self.task_queue, self.model, self.effects)

    def worker_process(self) -> WorkerProcess:
        """A worker subprocess serving the test's task queue (the test kills it)."""
        return WorkerProcess(self.address, self.task_queue, self.model.base_url, self.effects)

    def agent(self) -> TemporalAgent:
        """The durable agent over the test's store (a dead worker noticed within 5 s)."""
        return TemporalAgent(AGENT_NAME, store_url=self.store_url, heartbeat=timedelta(seconds=5))

    async def session(self, session_id: str) -> Session:
        return await stored_session(self.store_url, session_id)

    async def assert_log_rebuilds_the_wire_requests(
        self, session: Session, live: list[bytes] | None = None
    ) -> None:
        """The requests rebuilt from ``session``'s log are the bytes sent live (all the
        model server saw, unless ``live`` names them)."""
        sent = list(self.model.raw_requests) if live is None else live
        await assert_log_rebuilds_the_wire_requests(session, self.model, sent)


@pytest.fixture
def rig(
    client: Client,
    temporal_address: str,
    task_queue: str,
    model_server: FakeOpenAIServer,
    side_effects: Path,
    store_url: str,
) -> Rig:
    return Rig(client, temporal_address, task_queue, model_server, side_effects, store_url)


@pytest.fixture
def any_store_rig(rig: Rig, any_store_url: str) -> Rig:
    """The rig over a SQLite file, then over PostgreSQL."""
    return replace(rig, store_url=any_store_url)
