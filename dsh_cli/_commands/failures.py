"""How ``dsh`` reports a failure: one line on stderr and a non-zero exit status, or the
full traceback with ``--debug``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from dsh_cli._commands.terminal_text import neutralise
from dsh_llm import DshError

EXPECTED_ERRORS = (DshError, OSError, ValueError)
"""Failures a user can act on from the message alone (bad input, a damaged or missing
session, an unreachable file). Anything else is a bug and keeps its traceback."""

INTERRUPTED = 130
"""Exit status after Ctrl-C, as shells report it."""


def add_debug_argument(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """``--debug``. Only the top-level parser sets a default, so the option works both
    before and after a subcommand's name."""
    parser.add_argument(
        "--debug",
        action="store_true",
        default=False if top_level else argparse.SUPPRESS,
        help="show the full traceback when a command fails",
    )


def one_line(error: BaseException) -> str:
    """The error's message on one line (pydantic's messages span several)."""
    lines = [neutralise(line.strip()) for line in str(error).splitlines() if line.strip()]
    return "; ".join(lines) or type(error).__name__


def run_reporting_failures(
    run: Callable[[argparse.Namespace], int], args: argparse.Namespace
) -> int:
    """Run a command; turn an expected failure into one line on stderr and status 1."""
    try:
        return run(args)
    except KeyboardInterrupt:
        sys.stderr.write("dsh: interrupted\n")
        return INTERRUPTED
    except EXPECTED_ERRORS as error:
        if args.debug:
            raise
        sys.stderr.write(f"dsh: error: {one_line(error)}\n")
        return 1


__all__ = [
    "EXPECTED_ERRORS",
    "INTERRUPTED",
    "add_debug_argument",
    "one_line",
    "run_reporting_failures",
]
