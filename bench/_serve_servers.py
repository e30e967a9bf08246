"""The two servers of the serve-load bench as child processes on 127.0.0.1, and what
the bench reads of them from ``/proc``: CPU seconds and resident memory.

``dsh serve`` runs on a SQLite store with its in-process worker and the scripted agent
(``_serve_script:paced``); the peer is ``_serve_peer.py``. Each gets the script's
settings in its environment and writes its emit log into the run's folder.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from _serve_script import Script

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
DSH = "dsh"
PEER = "pydantic-ai"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True, slots=True)
class Server:
    """A running server: its base URL, its process, and the emit log of its model."""

    kind: str
    url: str
    pid: int
    emits: Path

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process so far (all its threads)."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()  # after the command name
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS

    def rss_bytes(self) -> int:
        """Resident memory of the server process now."""
        return int(Path(f"/proc/{self.pid}/statm").read_text().split()[1]) * _PAGE


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _command(kind: str, folder: Path, port: int) -> list[str]:
    if kind == DSH:
        store = f"sqlite:///{folder / 'sessions.db'}"
        serve = ["serve", "--store", store, "--agent", "_serve_script:paced", "--port", str(port)]
        return [sys.executable, "-m", "dsh_cli", *serve]
    if kind == PEER:
        return [sys.executable, str(BENCH_DIR / "_serve_peer.py"), str(port)]
    raise ValueError(f"no server {kind!r}: {DSH!r} or {PEER!r}")


@contextmanager
def serving(kind: str, script: Script, folder: Path) -> Iterator[Server]:
    """Server ``kind`` (``DSH`` or ``PEER``) serving ``script``, its files in
    ``folder``, stopped (SIGTERM, then SIGKILL) at the end."""
    port = _free_port()
    emits = folder / f"{kind}-emits.log"
    path = os.pathsep.join(filter(None, [str(ROOT), str(BENCH_DIR), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, **script.settings_env(str(emits))}
    process = subprocess.Popen(
        _command(kind, folder, port), cwd=BENCH_DIR, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if "serving" not in line:
            raise RuntimeError(f"the {kind} server did not start (it printed {line!r})")
        yield Server(kind, f"http://127.0.0.1:{port}", process.pid, emits)
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
