"""``dsh serve`` in a real process on a free 127.0.0.1 port, and the SSE reading the
tests share (every event checked against the AG-UI protocol's own models)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from ag_ui.core import Event
from pydantic import TypeAdapter
from service.workers import ROOT, child_env, stop

_EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def dsh_serve(store_url: str, agent: str | None, *extra: str) -> Iterator[str]:
    """The base URL of a ``dsh serve`` process serving ``store_url`` with the test
    agent ``agent`` (a ``tests.service.agents`` name, or ``module:factory``; ``None``:
    ``--no-worker``), stopped at the end."""
    port = free_port()
    factory = agent if agent is None or ":" in agent else f"tests.service.agents:{agent}"
    running = ["--no-worker"] if factory is None else ["--agent", factory]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dsh_cli",
            "serve",
            "--store",
            store_url,
            "--port",
            str(port),
            *running,
            *extra,
        ],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        assert "serving" in line, f"dsh serve did not start: {line!r}"
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: its AG-UI JSON and its ``id`` (a log seq) when it has one."""

    data: dict[str, Any]
    id: int | None


def read_events(
    client: httpx.Client,
    path: str,
    *,
    until: Any,
    last_event_id: int | None = None,
) -> list[SseEvent]:
    """The events of the stream at ``path`` up to and including the first for which
    ``until(event)`` is true; then the connection is closed."""
    headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
    events: list[SseEvent] = []
    with client.stream("GET", path, headers=headers, timeout=30) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        event_id: int | None = None
        for line in response.iter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                _EVENT.validate_python(data)
                events.append(SseEvent(data, event_id))
                event_id = None
                if until(events[-1]):
                    return events
    raise AssertionError(f"the stream ended before the awaited event: {events}")


def run_finished(count: int) -> Any:
    """``until`` for :func:`read_events`: the ``count``-th ``RUN_FINISHED``."""
    seen = [0]

    def check(event: SseEvent) -> bool:
        seen[0] += event.data["type"] == "RUN_FINISHED"
        return seen[0] >= count

    return check
