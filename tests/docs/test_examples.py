"""Every code block marked ``<!-- runnable -->`` in the docs runs, as a script of its
own in an empty directory, and exits 0 (the examples assert what they claim)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from docs.site import Example, markers, runnable_examples

EXAMPLES = runnable_examples()


def test_every_runnable_marker_is_on_a_python_block_and_there_are_some() -> None:
    assert len(EXAMPLES) == markers()
    assert len(EXAMPLES) >= 5
    assert {example.page for example in EXAMPLES} >= {
        "docs/getting-started.md",
        "docs/concepts/messages.md",
        "docs/concepts/sessions.md",
        "docs/concepts/agents.md",
    }


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_the_example_runs(example: Example, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-"],
        input=example.code,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{example} failed:\n{result.stderr}"
    assert list(tmp_path.iterdir()) == []  # an example cleans up after itself
