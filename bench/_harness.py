"""Shared timing and reporting for the benchmark suites (see bench/README.md).

A suite is a module ``bench/<name>.py`` with a function ``run(options: Options) ->
list[Case]``. A :class:`Case` holds one figure per subject (dsh and its peers) for
the same work, plus the targets it should meet as ratios to a peer. Subjects are
timed interleaved, repeat after repeat, so that drift in machine speed during the
run affects them alike; each figure is the median over the repeats.
"""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Options:
    """What the runner asks of a suite."""

    quick: bool = False
    """Fewer repeats and smaller sizes, so the whole run stays under a minute."""
    full_scale: bool = False
    """The scale suites (``scale_*.py``) at the issue's full scale (10,000 sessions,
    1M-event sessions: minutes each) instead of their default, smaller one."""

    def repeats(self, full: int) -> int:
        """How many repeats to take of a measurement that wants ``full`` of them."""
        return max(3, full // 4) if self.quick else full


@dataclass(frozen=True)
class Target:
    """A goal for one case: ``value[subject] / value[peer] <= max_ratio``."""

    peer: str
    max_ratio: float
    subject: str = "dsh"

    def describe(self) -> str:
        return f"{self.subject}/{self.peer} <= {self.max_ratio:g}"

    def ratio(self, values: Mapping[str, float]) -> float:
        return values[self.subject] / values[self.peer]

    def met(self, values: Mapping[str, float]) -> bool:
        return self.ratio(values) <= self.max_ratio


@dataclass(frozen=True)
class Case:
    """One piece of work measured for several subjects."""

    suite: str
    name: str
    unit: str
    """What a value counts: ``s`` (seconds per operation) or e.g. ``bytes``."""
    values: dict[str, float]
    """Subject name -> median figure; the first subject is the reference for ratios."""
    targets: tuple[Target, ...] = ()
    notes: str = ""
    clock: str = "wall"
    """``wall`` or ``cpu``: which clock timed the values (when the unit is ``s``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "case": self.name,
            "unit": self.unit,
            "clock": self.clock,
            "values": self.values,
            "targets": [
                {"target": t.describe(), "ratio": t.ratio(self.values), "met": t.met(self.values)}
                for t in self.targets
            ],
            "notes": self.notes,
        }


Clock = Callable[[], float]

WALL_CLOCK: Clock = time.perf_counter
"""Elapsed seconds, the default: right for work that waits (fsync, sockets, sleeps)."""
CPU_CLOCK: Clock = time.process_time
"""CPU seconds of this process (all threads): what CPU-bound work costs, much less
moved by other processes sharing the machine."""


def compare(
    subjects: Mapping[str, Callable[[], object]],
    *,
    number: int,
    repeats: int,
    clock: Clock = WALL_CLOCK,
) -> dict[str, float]:
    """Median seconds per call of each subject. Each repeat calls every subject
    ``number`` times, rotating which goes first; the garbage collector stays on,
    as it is in a real program."""
    return _medians(subjects, number=number, repeats=repeats, clocks=(clock,))[0]


def compare_clocks(
    subjects: Mapping[str, Callable[[], object]], *, number: int, repeats: int
) -> tuple[dict[str, float], dict[str, float]]:
    """:func:`compare` on the wall clock and in CPU time, from the same calls: the CPU
    figure leaves out the time other processes on a shared machine take the CPU."""
    wall, cpu = _medians(subjects, number=number, repeats=repeats, clocks=(WALL_CLOCK, CPU_CLOCK))
    return wall, cpu


def _medians(
    subjects: Mapping[str, Callable[[], object]],
    *,
    number: int,
    repeats: int,
    clocks: tuple[Clock, ...],
) -> list[dict[str, float]]:
    samples: list[dict[str, list[float]]] = [{name: [] for name in subjects} for _ in clocks]
    order = list(subjects)
    for _ in range(3):  # warm caches and lazy imports before measuring
        for name in order:
            subjects[name]()
    for repeat in range(repeats):
        rotation = order[repeat % len(order) :] + order[: repeat % len(order)]
        for name in rotation:
            call = subjects[name]
            starts = [clock() for clock in clocks]
            for _ in range(number):
                call()
            for clock, start, taken in zip(clocks, starts, samples, strict=True):
                taken[name].append((clock() - start) / number)
    return [{name: statistics.median(taken[name]) for name in subjects} for taken in samples]


def bytes_held(build: Callable[[], list[object]]) -> tuple[int, int]:
    """``(bytes still allocated, item count)`` for the list ``build`` returns, measured
    with tracemalloc while the list is alive."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        items = build()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    count = len(items)
    del items
    return after - before, count


def format_value(value: float, unit: str) -> str:
    """A figure with a readable unit (seconds become ns/µs/ms)."""
    if unit != "s":
        return f"{value:,.0f} {unit}"
    for scale, name in ((1e-6, "ns"), (1e-3, "µs"), (1.0, "ms")):
        if value < scale:
            return f"{value / scale * 1e3:,.2f} {name}"
    return f"{value:,.2f} s"


def print_case(case: Case) -> None:
    """Print one case: every subject's figure and its ratio to the first subject,
    then each target and whether it is met."""
    reference = next(iter(case.values))
    notes = ", ".join(filter(None, [f"{case.clock} time" if case.unit == "s" else "", case.notes]))
    print(f"\n[{case.suite}] {case.name}" + (f"  ({notes})" if notes else ""))
    width = max(map(len, case.values))
    for subject, value in case.values.items():
        figure = format_value(value, case.unit)
        base = case.values[reference]
        ratio = f"{value / base:6.2f}x {reference}" if base else ""
        print(f"  {subject:<{width}}  {figure:>14}   {ratio}")
    for target in case.targets:
        verdict = "met" if target.met(case.values) else "MISSED"
        print(f"  target {target.describe():<{width}}  {target.ratio(case.values):6.2f}  {verdict}")
