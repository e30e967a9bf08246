"""The README's structured-output and sync-tool example runs as written."""

from __future__ import annotations

from example_scripts import run_example


def test_structured_output_example_prints_the_validated_answer() -> None:
    assert run_example("structured_output.py") == ["Paris 21.5", "The city's English name."]
