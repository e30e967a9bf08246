"""Running the real ``dsh`` console script in a subprocess, in a scratch directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_SCRIPT = shutil.which("dsh")
DSH_COMMAND = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "dsh_cli"]
"""The installed console script, or the module when it is not on PATH."""


def dsh_environment() -> dict[str, str]:
    """The environment for a ``dsh`` run: a fixed width and no colour, so output is
    plain text a test can search."""
    return {**os.environ, "COLUMNS": "160", "NO_COLOR": "1", "TERM": "dumb"}


@dataclass
class Dsh:
    """Runs ``dsh`` with ``cwd`` as the working directory."""

    cwd: Path
    env: dict[str, str] = field(default_factory=dsh_environment)

    def run(
        self, *args: str, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*DSH_COMMAND, *args],
            cwd=self.cwd,
            input=input,
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            timeout=60,
        )

    def ok(self, *args: str, input: str | None = None) -> str:
        """Run and require success; return standard output."""
        result = self.run(*args, input=input)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def json(self, *args: str) -> Any:
        """Run a ``--json`` command and parse its output."""
        return json.loads(self.ok(*args, "--json"))


@dataclass(frozen=True)
class DemoRun:
    """The output of one ``dsh demo``, where it ran, and the session it stored."""

    output: str
    directory: Path
    session_id: str


def run_demo(directory: Path) -> DemoRun:
    """Run the demo at full speed in ``directory`` (it writes ``dsh.db`` there)."""
    result = Dsh(directory).run("demo", "--delay", "0")
    assert result.returncode == 0, result.stderr
    sessions = Dsh(directory).json("sessions", "list")
    return DemoRun(result.stdout, directory, sessions[-1]["id"])
