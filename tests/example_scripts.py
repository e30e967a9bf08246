"""Run a script of ``examples/`` as a user would, in a subprocess over this checkout,
and hand back what it printed: the README's examples are tested as written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run_example(name: str) -> list[str]:
    """The lines ``examples/<name>`` printed; fails the test on a non-zero exit."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()
