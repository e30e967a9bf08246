"""Worker and client child processes for the service tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).with_name("client_child.py")


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def start_worker(url: str, agent: str, *, idle_release: float = 0.5) -> subprocess.Popen[str]:
    """``dsh worker`` in its own process, once it says it serves."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dsh_cli",
            "worker",
            "--store",
            url,
            "--agent",
            f"tests.service.agents:{agent}",
            "--idle-release",
            str(idle_release),
        ],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert "serving" in line, f"the worker did not start: {line!r}"
    return process


def stop(process: subprocess.Popen[str], *, kill: bool = False) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    process.wait(timeout=30)


@contextmanager
def worker(url: str, agent: str, *, idle_release: float = 0.5) -> Iterator[subprocess.Popen[str]]:
    process = start_worker(url, agent, idle_release=idle_release)
    try:
        yield process
    finally:
        stop(process)


def client(url: str, session_id: str, verb: str, arg: str) -> subprocess.Popen[str]:
    """A client process delivering one request; ``receipt`` reads what it printed."""
    return subprocess.Popen(
        [sys.executable, str(CLIENT), url, session_id, verb, arg],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def receipt(process: subprocess.Popen[str]) -> dict[str, object]:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    result: dict[str, object] = json.loads(out)
    return result
