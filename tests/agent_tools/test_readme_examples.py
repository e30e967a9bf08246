"""The README's structured-output and sync-tool example runs as written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_structured_output_example_prints_the_validated_answer() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "structured_output.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Paris 21.5", "The city's English name."]
