"""The ``dsh`` command line, once its extra's libraries are known to import.

Each subcommand is a :class:`Subcommand`: a name, a help line, a function that adds
its arguments, and a function that runs it and returns the exit status. They are
registered in one place, :data:`SUBCOMMANDS`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Any

from dsh_cli._commands import chat, demo, replay, serve, sessions, worker
from dsh_cli._commands.failures import add_debug_argument, run_reporting_failures
from dsh_llm._schema import wire_schemas as llm_schemas
from dsh_session import wire_schemas as session_schemas


@dataclass(frozen=True)
class Subcommand:
    """One ``dsh <name>`` command."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    """Runs the command with the parsed arguments; returns the exit status."""


def all_wire_schemas() -> dict[str, dict[str, Any]]:
    """Every package's wire schemas, merged; the one place a package's
    ``wire_schemas()`` is added."""
    return {**llm_schemas(), **session_schemas()}


def _add_schema_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", type=Path, required=True, help="directory to write <TypeName>.json files into"
    )


def _run_schema(args: argparse.Namespace) -> int:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    schemas = all_wire_schemas()
    for name, schema in schemas.items():
        (out / f"{name}.json").write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(schemas)} JSON Schemas to {out}")
    return 0


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand(
        name="schema",
        help="write the JSON Schema (draft 2020-12) of every wire type, one file per type",
        add_arguments=_add_schema_arguments,
        run=_run_schema,
    ),
    Subcommand("demo", demo.HELP, demo.add_arguments, demo.run),
    Subcommand("chat", chat.HELP, chat.add_arguments, chat.run),
    Subcommand("sessions", sessions.HELP, sessions.add_arguments, sessions.run),
    Subcommand("worker", worker.HELP, worker.add_arguments, worker.run),
    Subcommand("serve", serve.HELP, serve.add_arguments, serve.run),
    Subcommand("replay", replay.HELP, replay.add_arguments, replay.run),
)


DISTRIBUTION = "dsh-sdk"
"""The distribution that installs the ``dsh`` command."""


def dsh_version() -> str:
    """The installed distribution's version (``unknown`` when run from an uninstalled
    source tree, where there is no metadata to read)."""
    try:
        return installed_version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(prog="dsh", description="dsh agent SDK tools")
    parser.add_argument(
        "--version", action="version", version=f"dsh {dsh_version()} ({DISTRIBUTION})"
    )
    add_debug_argument(parser, top_level=True)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in SUBCOMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.help)
        add_debug_argument(sub)
        command.add_arguments(sub)
        sub.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dsh`` with ``argv`` (default: the process arguments); returns the exit status."""
    args = build_parser().parse_args(argv)
    return run_reporting_failures(args.run, args)


__all__ = [
    "DISTRIBUTION",
    "SUBCOMMANDS",
    "Subcommand",
    "all_wire_schemas",
    "build_parser",
    "dsh_version",
    "main",
]
