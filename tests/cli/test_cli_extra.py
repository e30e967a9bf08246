"""The command line is an extra: the libraries never import its terminal libraries, and
``dsh`` without them is one line saying how to install them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli.runner import dsh_environment

_TERMINAL_LIBRARIES = ("rich", "prompt_toolkit")

# Run before the program in a fresh interpreter: every import of a blocked top-level
# module (and its submodules) fails as an uninstalled one does, then the program runs
# as `python -m` or the console script would run it.
_WITHOUT = """\
import runpy, sys
from importlib.abc import MetaPathFinder

blocked = set(sys.argv[1].split(","))
how, target = sys.argv[2], sys.argv[3]

class Uninstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Uninstalled())
sys.argv = [target, *sys.argv[4:]]
if how == "module":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    runpy.run_path(target, run_name="__main__")
"""


def _python(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dsh_environment(),
        timeout=60,
    )


def test_importing_the_libraries_imports_no_terminal_library(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "import dsh_agent, dsh_llm, dsh_session\n"
        f"print(sorted(name for name in sys.modules if name.partition('.')[0] in "
        f"{_TERMINAL_LIBRARIES!r}))\n"
    )
    result = _python("-c", probe, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[]\n"


def test_importing_the_cli_package_imports_no_terminal_library(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "import dsh_cli\n"
        f"print(sorted(name for name in sys.modules if name.partition('.')[0] in "
        f"{_TERMINAL_LIBRARIES!r}))\n"
    )
    result = _python("-c", probe, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[]\n"


def _entries() -> list[tuple[str, str]]:
    entries = [("module", "dsh_cli")]
    script = shutil.which("dsh")
    if script is not None:
        entries.append(("script", script))
    return entries


@pytest.mark.parametrize("missing", ["rich", "prompt_toolkit", "rich,prompt_toolkit"])
@pytest.mark.parametrize(("how", "target"), _entries())
def test_without_the_extra_dsh_says_how_to_install_it(
    tmp_path: Path, missing: str, how: str, target: str
) -> None:
    result = _python("-c", _WITHOUT, missing, how, target, "demo", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "pip install 'dsh-sdk[cli]'" in lines[0]
    assert missing.split(",")[0] in lines[0]
    assert not (tmp_path / "dsh.db").exists()  # nothing ran


def test_the_blocker_is_what_fails(tmp_path: Path) -> None:
    """The same bootstrap with nothing blocked runs ``dsh`` normally."""
    result = _python(
        "-c",
        _WITHOUT,
        "",
        "module",
        "dsh_cli",
        "sessions",
        "list",
        "--store",
        "memory://",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
