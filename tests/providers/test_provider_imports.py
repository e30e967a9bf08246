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
def loaded():
    return {sdk for sdk in ("openai", "anthropic", "google.genai") if sdk in sys.modules}
assert loaded() == set(), f"imported eagerly: {loaded()}"
dsh_llm.providers.adapter_for("ollama:llama3.2")
assert loaded() == {"openai"}, f"ollama:MODEL imported {loaded()}"
dsh_llm.providers.OpenAIResponsesAdapter
assert loaded() == {"openai"}, f"OpenAIResponsesAdapter imported {loaded()}"
dsh_llm.providers.GeminiAdapter
assert loaded() == {"openai", "google.genai"}, f"GeminiAdapter imported {loaded()}"
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
