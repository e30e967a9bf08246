"""The README's "Run agents as a service" example, as written: `dsh worker` in one
process, `examples/service_client.py` in another."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .workers import ROOT, child_env, stop


@pytest.mark.timeout(120)
def test_the_readme_service_example_runs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'service.db'}"
    worker = subprocess.Popen(
        [sys.executable, "-m", "dsh_cli", "worker", "--store", url, "--agent",
         "examples.service_agent:build"],
        cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert worker.stdout is not None and "serving" in worker.stdout.readline()
        done = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "service_client.py"), url],
            cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=90, check=False,
        )  # fmt: skip
    finally:
        stop(worker)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith("the retry got the same receipt: True")
    assert lines[1:] == ["assistant: you said 'hello, worker'", "turn ended: completed"]
