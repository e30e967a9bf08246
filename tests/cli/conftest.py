"""Fixtures: ``dsh`` in a scratch directory, and one shared demo run per module."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli.runner import DemoRun, Dsh, run_demo


@pytest.fixture
def dsh(tmp_path: Path) -> Dsh:
    """``dsh`` in an empty scratch directory."""
    return Dsh(tmp_path)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """One demo run whose ``dsh.db`` is shared by a module's tests: read it, or copy
    it (``demo_copy``) before changing anything."""
    return run_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def demo_copy(demo: DemoRun, tmp_path: Path) -> Dsh:
    """``dsh`` in a private copy of the demo's directory."""
    shutil.copy(demo.directory / "dsh.db", tmp_path / "dsh.db")
    return Dsh(tmp_path)
