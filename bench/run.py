"""Run every benchmark suite in one process and print figures and ratios.

    python bench/run.py [--quick] [--json FILE] [--suite NAME ...]

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


def discover_suites() -> dict[str, SuiteRun]:
    """Every suite module's ``run`` function, by module name, in name order."""
    suites: dict[str, SuiteRun] = {}
    for path in sorted(BENCH_DIR.glob("*.py")):
        if path.stem.startswith("_") or path.stem == "run":
            continue
        module = importlib.import_module(path.stem)
        suites[path.stem] = cast(SuiteRun, module.run)
    return suites


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run under a minute")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument("--suite", action="append", help="run only this suite (repeatable)")
    args = parser.parse_args(argv)

    suites = discover_suites()
    chosen = args.suite or list(suites)
    unknown = sorted(set(chosen) - set(suites))
    if unknown:
        parser.error(f"unknown suite(s) {unknown}; available: {sorted(suites)}")

    options = Options(quick=args.quick)
    cases: list[Case] = []
    for name in chosen:
        print(f"\n=== suite {name}{' (quick)' if options.quick else ''}", flush=True)
        for case in suites[name](options):
            print_case(case)
            cases.append(case)

    missed = [t.describe() for c in cases for t in c.targets if not t.met(c.values)]
    print(f"\n{len(cases)} cases; targets missed: {len(missed)}")
    if args.json:
        report = {"quick": options.quick, "cases": [case.to_json() for case in cases]}
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
