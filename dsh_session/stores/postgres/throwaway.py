"""A throwaway PostgreSQL server: a private cluster for tests and benchmarks.

It runs the installed PostgreSQL binaries (``pg_ctl`` on the path, else the newest
``/usr/lib/postgresql/*/bin``) over a fresh data directory, listening on 127.0.0.1 at a
free port, with trust authentication for the local superuser ``postgres``. initdb
refuses to run as root, so under root the server runs as an unprivileged user
(``DSH_TEST_POSTGRES_USER``, else ``nobody``). :meth:`ThrowawayServer.stop` stops the
server and deletes the directory: nothing outlives the run.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Self

from dsh_session.errors import PostgresUnavailableError

_DEBIAN_BINARIES = Path("/usr/lib/postgresql")


def find_binaries() -> Path:
    """The directory holding ``initdb`` and ``pg_ctl``, or raise
    :class:`PostgresUnavailableError`."""
    on_path = shutil.which("pg_ctl")
    candidates = [Path(on_path).resolve().parent] if on_path else []
    if _DEBIAN_BINARIES.is_dir():
        versions = [p / "bin" for p in _DEBIAN_BINARIES.iterdir() if p.name.isdigit()]
        candidates += sorted(versions, key=lambda p: int(p.parent.name), reverse=True)
    for directory in candidates:
        if (directory / "initdb").is_file() and (directory / "pg_ctl").is_file():
            return directory
    raise PostgresUnavailableError(
        "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or under /usr/lib/postgresql"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class ThrowawayServer:
    """Start with :meth:`start` (or ``with``), connect with :attr:`dsn`, end with
    :meth:`stop`. ``settings`` are extra ``postgres -c`` options."""

    def __init__(self, *, settings: dict[str, str] | None = None) -> None:
        self.binaries = find_binaries()
        self.settings = {"max_connections": "200", **(settings or {})}
        self.port = 0
        self._root: Path | None = None
        self._user = os.environ.get("DSH_TEST_POSTGRES_USER", "nobody")

    @property
    def dsn(self) -> str:
        """A libpq URL for the superuser's ``postgres`` database."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        """Create the cluster and start the server (a few tries, in case another
        process takes the chosen port first)."""
        root = Path(tempfile.mkdtemp(prefix="dsh-postgres-"))
        self._root = root
        os.chmod(root, 0o755)
        if os.geteuid() == 0:
            shutil.chown(root, self._user)
        self._run(
            "initdb",
            "-D",
            str(root / "data"),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        )
        for attempt in range(5):
            self.port = _free_port()
            options = " ".join(
                [f"-p {self.port}", "-c listen_addresses=127.0.0.1", "-c unix_socket_directories="]
                + [f"-c {name}={value}" for name, value in self.settings.items()]
            )
            try:
                self._run(
                    "pg_ctl",
                    "start",
                    "-w",
                    "-t",
                    "60",
                    "-D",
                    str(root / "data"),
                    "-l",
                    str(root / "server.log"),
                    "-o",
                    options,
                )
                return
            except subprocess.CalledProcessError:
                if attempt == 4:
                    log = (root / "server.log").read_text(errors="replace")[-2000:]
                    self.stop()
                    raise RuntimeError(f"the throwaway PostgreSQL did not start:\n{log}") from None

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its directory."""
        root, self._root = self._root, None
        if root is None:
            return
        if (root / "data" / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(root / "data"))
            except subprocess.CalledProcessError:
                self._run("pg_ctl", "stop", "-w", "-m", "immediate", "-D", str(root / "data"))
        shutil.rmtree(root, ignore_errors=True)

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.binaries / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", self._user, "--", *command]
        subprocess.run(command, check=True, capture_output=True, cwd="/")

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


__all__ = [
    "ThrowawayServer",
    "find_binaries",
]
