"""examples/mcp_tools.py runs as written: it starts itself as a stdio MCP server, a
scripted model calls the server's tool, and the log rebuilds both requests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_mcp_example_calls_the_servers_tool_and_rebuilds_its_requests() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "mcp_tools.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "tools: ['units_km_to_miles']",
        "answer: A marathon is about 26.2 miles.",
        "tool result: 26.2 miles",
        "requests rebuilt: True",
    ]
