"""Provider SDKs are optional extras: importing dsh_llm (and its providers package)
must not import them; only using an adapter does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECK = """
import sys
import dsh_llm
import dsh_llm.providers
assert "openai" not in sys.modules and "anthropic" not in sys.modules, "imported eagerly"
dsh_llm.providers.OpenAIChatAdapter
dsh_llm.providers.OpenAIResponsesAdapter
assert "openai" in sys.modules and "anthropic" not in sys.modules, "imported too much"
"""


def test_sdks_are_imported_only_when_an_adapter_is_used() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=Path(__file__).parents[2],  # this checkout's packages first on sys.path
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
