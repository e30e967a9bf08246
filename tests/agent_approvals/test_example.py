"""The guide's approvals example runs as written, in a subprocess."""

from __future__ import annotations

import re

from example_scripts import EXAMPLES, ROOT, run_example

EXAMPLE = EXAMPLES / "approvals.py"


def test_the_approvals_example_asks_then_a_second_agent_approves() -> None:
    assert run_example("approvals.py") == [
        'waiting: delete_logs {"path": "/var/log"} (call-rm)',
        "  (deleting logs under /var/log)",
        "Deleted the old logs; /var has room again.",
    ]


def test_the_guide_shows_the_example_s_own_code() -> None:
    guide = (ROOT / "docs" / "guide.md").read_text()
    section = guide[guide.index("## Approvals that survive a restart") :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    shown = [line.strip() for line in match.group(1).splitlines() if line.strip()]
    source = [line.strip() for line in EXAMPLE.read_text().splitlines()]
    windows = [source[start : start + len(shown)] for start in range(len(source))]
    assert shown in windows  # a verbatim excerpt of the script the test above runs
