"""Run every benchmark suite in one process and print figures and ratios.

    python bench/run.py [--quick] [--full-scale] [--json FILE] [--suite NAME ...]

Suites are the modules beside this file whose name does not start with ``_``; each
exposes ``run(options) -> list[Case]`` (see bench/README.md).
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from _harness import Case, Options, print_case

BENCH_DIR = Path(__file__).resolve().parent
SuiteRun = Callable[[Options], list[Case]]


class MissingPeerError(Exception):
    """A chosen suite imports a package that is not installed (a peer of the
    ``bench`` extra, usually): named, with the install that brings it."""


def discover_suites() -> list[str]:
    """Every suite module's name, in name order (nothing imported yet)."""
    return [
        path.stem
        for path in sorted(BENCH_DIR.glob("*.py"))
        if not path.stem.startswith("_") and path.stem != "run"
    ]


def load_suite(name: str) -> SuiteRun:
    """The ``run`` function of suite ``name``; :class:`MissingPeerError` when the suite
    needs a package this environment lacks."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        raise MissingPeerError(
            f"suite {name!r} needs the package {error.name!r}, which is not installed: "
            "python -m pip install -e '.[dev,bench]' (or run other suites with --suite)"
        ) from None
    return cast(SuiteRun, module.run)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run under a minute")
    parser.add_argument(
        "--full-scale",
        action="store_true",
        help="the scale suites at full scale (10,000 sessions, 1M events: minutes)",
    )
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument("--suite", action="append", help="run only this suite (repeatable)")
    args = parser.parse_args(argv)

    suites = discover_suites()
    chosen = args.suite or suites
    unknown = sorted(set(chosen) - set(suites))
    if unknown:
        parser.error(f"unknown suite(s) {unknown}; available: {suites}")
    try:  # every chosen suite imports before any runs: a missing peer fails at once
        runs = {name: load_suite(name) for name in chosen}
    except MissingPeerError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")

    options = Options(quick=args.quick, full_scale=args.full_scale)
    cases: list[Case] = []
    for name in chosen:
        print(f"\n=== suite {name}{' (quick)' if options.quick else ''}", flush=True)
        for case in runs[name](options):
            print_case(case)
            cases.append(case)

    missed = [t.describe() for c in cases for t in c.targets if not t.met(c.values)]
    print(f"\n{len(cases)} cases; targets missed: {len(missed)}")
    if args.json:
        report = {
            "quick": options.quick,
            "full_scale": options.full_scale,
            "cases": [case.to_json() for case in cases],
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
