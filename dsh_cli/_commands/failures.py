"""How ``dsh`` reports a failure: one line on stderr and a non-zero exit status, or the
full traceback with ``--debug``. Two endings are not failures of dsh and print
nothing more: Ctrl-C (``dsh: interrupted``, status 130) and a reader that stopped
reading standard output (``dsh sessions export ID | head``: status 141, as a shell
reports a tool that SIGPIPE ended)."""

from __future__ import annotations

import argparse
import logging
import os
import select
import sys
from collections.abc import Callable

from dsh_cli._commands.store_option import named_as_typed
from dsh_cli._commands.terminal_text import neutralise
from dsh_llm import DshError

EXPECTED_ERRORS = (DshError, OSError, ValueError)
"""Failures a user can act on from the message alone (bad input, a damaged or missing
session, an unreachable file). Anything else is a bug and keeps its traceback."""

INTERRUPTED = 130
"""Exit status after Ctrl-C, as shells report it."""

STDOUT_CLOSED = 141
"""Exit status when the reader of standard output went away: 128 + SIGPIPE, what a
shell reports for a tool that SIGPIPE ended (``cat big | head``)."""


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
    return one_line_text(str(error)) or type(error).__name__


def one_line_text(text: str) -> str:
    """``text`` on one line, its control characters made visible."""
    return "; ".join(neutralise(line.strip()) for line in text.splitlines() if line.strip())


def reported(error: BaseException, args: argparse.Namespace) -> str:
    """The line a command's failure is reported with: on one line, naming the store
    as the user typed it (``--store``), passwords masked."""
    message = one_line(error)
    typed: str | None = getattr(args, "store", None)
    return message if typed is None else named_as_typed(message, typed, error)


class WarningLines(logging.Handler):
    """Warnings and errors the libraries log (e.g. a session too damaged to be
    listed) as one ``dsh: warning: ...`` line each on standard error, naming the
    store as typed (``--debug`` leaves logging as Python sets it up)."""

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(logging.WARNING)
        self._typed: str | None = getattr(args, "store", None)

    def emit(self, record: logging.LogRecord) -> None:
        text = one_line_text(record.getMessage())
        if self._typed is not None:
            text = named_as_typed(text, self._typed)
        sys.stderr.write(f"dsh: {record.levelname.lower()}: {text}\n")


def run_reporting_failures(
    run: Callable[[argparse.Namespace], int], args: argparse.Namespace
) -> int:
    """Run a command; turn an expected failure into one line on stderr and status 1.
    Without ``--debug`` the libraries' warnings are single lines too."""
    warnings = None if args.debug else WarningLines(args)
    if warnings is not None:
        logging.getLogger().addHandler(warnings)
    try:
        return _run_reporting(run, args)
    finally:
        if warnings is not None:
            logging.getLogger().removeHandler(warnings)


def _run_reporting(run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        return run(args)
    except KeyboardInterrupt:
        sys.stderr.write("dsh: interrupted\n")
        return INTERRUPTED
    except BrokenPipeError as error:
        if not stdout_reader_gone():
            if args.debug:
                raise
            sys.stderr.write(f"dsh: error: {reported(error, args)}\n")
            return 1
        silence_stdout()
        return STDOUT_CLOSED
    except EXPECTED_ERRORS as error:
        if args.debug:
            raise
        sys.stderr.write(f"dsh: error: {reported(error, args)}\n")
        return 1


def stdout_reader_gone() -> bool:
    """Whether standard output is a pipe or socket whose reader closed it."""
    try:
        poller = select.poll()
        poller.register(sys.__stdout__.fileno() if sys.__stdout__ else 1, select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def silence_stdout() -> None:
    """Point standard output at the null device, so the interpreter's last flush of
    what is still buffered does not fail again on the way out."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
    finally:
        os.close(devnull)


__all__ = [
    "EXPECTED_ERRORS",
    "INTERRUPTED",
    "STDOUT_CLOSED",
    "WarningLines",
    "add_debug_argument",
    "one_line",
    "one_line_text",
    "reported",
    "run_reporting_failures",
    "silence_stdout",
    "stdout_reader_gone",
]
