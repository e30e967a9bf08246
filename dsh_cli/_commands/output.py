"""Where and how the commands write: rich consoles for people, plain JSON for programs.

Human output goes to stdout through :func:`stdout_console`; progress and notes go to
stderr, so ``--json`` output and piped replies stay clean. Progress is shown only
when stderr is a terminal.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.status import Status

from dsh_cli._commands.terminal_text import SafeConsole, escape_json_controls


def stdout_console() -> Console:
    """A console on stdout that prints text as given (no markup, no highlighting, no
    control characters from the text)."""
    return SafeConsole(soft_wrap=True)


def stderr_console() -> Console:
    """A console on stderr, for notes and progress (as safe as :func:`stdout_console`)."""
    return SafeConsole(stderr=True, soft_wrap=True)


def print_json(value: Any) -> None:
    """Write ``value`` as indented JSON on stdout (not through rich, which would wrap)."""
    sys.stdout.write(escape_json_controls(json.dumps(value, indent=2, ensure_ascii=False)) + "\n")


@contextmanager
def progress(description: str) -> Iterator[Status | None]:
    """A spinner with ``description`` on stderr while the block runs, when stderr is a
    terminal; otherwise nothing. Yields the status so a loop can update its text."""
    console = stderr_console()
    if not console.is_terminal:
        yield None
        return
    with console.status(description) as status:
        yield status


__all__ = [
    "print_json",
    "progress",
    "stderr_console",
    "stdout_console",
]
