"""The documentation site builds with warnings as errors, its API reference is made
from the docstrings, and every decision note is on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from docs.site import DOCS, REPOSITORY


def test_the_site_builds_strictly_with_the_reference_and_every_decision(tmp_path: Path) -> None:
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stderr, result.stderr

    store_api = (site / "reference" / "dsh_session" / "index.html").read_text()
    assert 'id="dsh_session.stores.SessionStore.delete"' in store_api
    assert "Remove a stored session for good" in store_api  # its docstring
    message_api = (site / "reference" / "dsh_llm" / "index.html").read_text()
    assert 'id="dsh_llm.create_user_message"' in message_api

    decisions = (site / "decisions" / "index.html").read_text()
    for note in sorted((DOCS / "decisions").glob("20*.md")):
        assert f'href="{note.stem}/"' in decisions, note.name
        assert (site / "decisions" / note.stem / "index.html").exists()
    assert (site / "cli" / "index.html").exists()
    assert (site / "harness-format" / "index.html").exists()
