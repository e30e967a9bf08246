"""``dsh`` and ``python -m dsh_cli`` are the same program."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from cli.runner import Dsh, dsh_environment


def test_python_m_runs_the_same_program(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "dsh_cli",
            "sessions",
            "list",
            "--json",
            "--store",
            "memory://",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=dsh_environment(),
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    assert result.stdout == Dsh(tmp_path).ok("sessions", "list", "--json", "--store", "memory://")


def test_help_lists_every_command(dsh: Dsh) -> None:
    usage = dsh.ok("--help")
    for command in ("demo", "chat", "sessions", "schema"):
        assert command in usage


def test_a_usage_error_exits_with_status_2(dsh: Dsh) -> None:
    result = dsh.run("sessions", "fork")
    assert result.returncode == 2
    assert "the following arguments are required: id" in result.stderr


def test_version_names_the_installed_distribution(dsh: Dsh) -> None:
    assert dsh.ok("--version") == f"dsh {version('dsh-sdk')} (dsh-sdk)\n"
