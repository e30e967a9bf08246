"""The ``dsh`` command line: ``dsh demo``, ``dsh chat``, ``dsh sessions ...`` and
``dsh schema`` (docs/cli.md).

It is a client of the three library packages and lives beside them in the same
distribution, behind the ``cli`` extra (``pip install 'dsh-sdk[cli]'``), which brings
its terminal libraries, rich and prompt_toolkit. Importing this package imports
neither of them: :func:`main` checks that they import before it loads the command
line, so ``dsh`` without the extra is one line saying how to install it rather than
a traceback. Everything else here is private.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import import_module

__all__ = ["main"]

_EXTRA_LIBRARIES = ("rich", "prompt_toolkit")
"""The top-level modules the ``cli`` extra installs and the command line imports."""

_INSTALL = "pip install 'dsh-sdk[cli]'"


def _missing_library() -> str | None:
    """The first of the extra's libraries that is not installed, or ``None``."""
    for name in _EXTRA_LIBRARIES:
        try:
            import_module(name)
        except ImportError as error:
            if error.name is None or error.name.partition(".")[0] != name:
                raise  # installed but broken: not a missing extra, so not hidden
            return name
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dsh`` with ``argv`` (default: the process arguments); returns the exit
    status. Without the ``cli`` extra: one line on standard error and status 1."""
    missing = _missing_library()
    if missing is not None:
        print(
            f"dsh: error: the command line needs the 'cli' extra ({missing} is not "
            f"installed): {_INSTALL}",
            file=sys.stderr,
        )
        return 1
    from dsh_cli._main import main as run_command_line

    return run_command_line(argv)
