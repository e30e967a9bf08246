"""Optional integrations import their SDKs lazily: importing the four packages (and the
public homes of the integrations' entry points) loads none of the extras' libraries.
Which module may import which SDK at all is the import-linter contract in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXTRAS_LIBRARIES = (
    "openai",
    "anthropic",
    "google.genai",
    "mcp",
    "opentelemetry",
    "psycopg",
    "psycopg_pool",
    "rich",
    "prompt_toolkit",
    "temporalio",
    "starlette",
    "uvicorn",
)

CHECK = f"""
import sys
import dsh_llm, dsh_llm.providers, dsh_llm.testing
import dsh_session, dsh_session.stores, dsh_session.events
import dsh_agent, dsh_agent.requests, dsh_agent.tools, dsh_agent.inbox
import dsh_cli
loaded = sorted(name for name in {EXTRAS_LIBRARIES!r} if name in sys.modules)
print(",".join(loaded))
"""


def test_importing_the_packages_loads_no_optional_sdk() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=Path(__file__).parents[2],  # this checkout's packages first on sys.path
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "", f"imported eagerly: {completed.stdout.strip()}"


def test_the_check_sees_an_sdk_when_one_is_imported() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", CHECK.replace("import dsh_cli", "import dsh_cli, rich")],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert completed.stdout.strip() == "rich"
