"""examples/mcp_tools.py runs as written: it starts itself as a stdio MCP server, a
scripted model calls the server's tool, and the log rebuilds both requests."""

from __future__ import annotations

from example_scripts import run_example


def test_the_mcp_example_calls_the_servers_tool_and_rebuilds_its_requests() -> None:
    assert run_example("mcp_tools.py") == [
        "tools: ['units_km_to_miles']",
        "answer: A marathon is about 26.2 miles.",
        "tool result: 26.2 miles",
        "requests rebuilt: True",
    ]
