"""Append suite: appending 100k events of a realistic turn mix to an in-memory session,
dsh beside the TypeScript harness (issue 16: dsh must beat the harness here).

The events are the session suite's workload (``_session_with`` in ``session.py``): each
turn is ``turn/start``, ``step/start``, ``user/message``, a ``request/header`` in the
first turn only, four ``assistant/chunk`` deltas and the ``assistant/message`` that
cites them, ``tool/call`` and ``tool/result``, ``step/end``, then a second step of four
deltas and a text answer, ``step/end`` and ``turn/end`` (19 events; 20 in the first).
Creating the messages is part of the timed loop on both sides, as in a real turn.

Subjects, each timed from a collected heap and both clocks read around the loop alone:

- ``dsh``: ``Session.append`` with the cyclic collector on, as in a real program;
- ``dsh, gc paused``: the same with the collector paused (a second reading: how much of
  dsh's time is the collector's);
- ``harness``: the harness's own ``Session.append`` building the same sequence
  (``harness_peer/append.mts`` under Node, when the environment names it; see
  ``_harness_peer``). Before timing, the harness's first two turns are checked against
  dsh's, field by field (ids and times aside), so both append the same events.

Repeats alternate between the subjects in rotating order, so drift in machine speed hits
them alike. Target (issue 33): ``dsh, gc paused`` at most 0.85x the harness, on both
clocks; ``dsh`` with the collector running is reported beside it.
"""

from __future__ import annotations

import gc
import json
import re
import statistics
import time
from collections.abc import Callable
from typing import Any

from _harness import Case, Options, Target
from _harness_peer import SKIPPED, HarnessPeer
from session import _session_with

SUITE = "append_100k"
SAMPLE = 39
"""Events compared with the harness's: the first two turns (20 + 19 events)."""
WARM_UP = 20_000
"""Events appended once per subject before timing (a whole quick run), so node has
optimized the harness's hot paths and dsh's caches and imports are warm."""
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

Timing = tuple[float, float]
"""``(wall, cpu)`` seconds of one repeat."""


def _time_dsh(events: int, *, collector: bool) -> Timing:
    """Append ``events`` events to a new dsh session; the session is freed untimed."""
    gc.collect()
    if not collector:
        gc.disable()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        session = _session_with(events)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        gc.enable()
    if session.seq != events:
        raise RuntimeError(f"dsh appended {session.seq} events, expected {events}")
    return wall, cpu


def _comparable(event: dict[str, Any]) -> dict[str, Any]:
    """An event's wire form with what each side mints for itself (its time, message
    ids) replaced by placeholders."""
    return {**_ids_blanked(event), "time": "<time>"}


def _ids_blanked(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _ids_blanked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_ids_blanked(item) for item in value]
    if isinstance(value, str) and _UUID.match(value):
        return "<id>"
    return value


def _check_same_events(peer: HarnessPeer) -> None:
    """Refuse to compare unless the harness appends the very events dsh does."""
    ours = [_comparable(json.loads(e.model_dump_json())) for e in _session_with(SAMPLE).events]
    theirs = [_comparable(event) for event in peer.sample(SAMPLE)]
    for seq, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
        if mine != other:
            raise RuntimeError(
                f"the harness driver's event {seq} differs from dsh's:\n  dsh:     {mine}\n"
                f"  harness: {other}"
            )


def _measure(
    subjects: dict[str, Callable[[int], Timing]], events: int, repeats: int
) -> list[dict[str, float]]:
    """Median wall and CPU seconds per subject of appending ``events`` events: ``[wall,
    cpu]``, after one warm-up call of ``WARM_UP`` events each."""
    samples: dict[str, list[Timing]] = {name: [] for name in subjects}
    order = list(subjects)
    for name in order:
        subjects[name](WARM_UP)
    for repeat in range(repeats):
        shift = repeat % len(order)
        for name in order[shift:] + order[:shift]:
            samples[name].append(subjects[name](events))
    return [
        {name: statistics.median(t[clock] for t in timings) for name, timings in samples.items()}
        for clock in (0, 1)
    ]


def _cases(events: int, options: Options, peer: HarnessPeer | None) -> list[Case]:
    subjects: dict[str, Callable[[int], Timing]] = {
        "dsh": lambda count: _time_dsh(count, collector=True),
        "dsh, gc paused": lambda count: _time_dsh(count, collector=False),
    }
    notes = SKIPPED
    if peer is not None:
        _check_same_events(peer)
        subjects["harness"] = peer.append
        notes = f"harness on node {peer.node_version}, timed inside node"
    wall, cpu = _measure(subjects, events, options.repeats(5))
    # issue 33: dsh's own work against the harness's; the collector's walk is reported
    targets = (Target("harness", 0.85, subject="dsh, gc paused"),) if peer is not None else ()
    name = f"append {events // 1000}k events of the turn mix to an in-memory session"
    per_event = ", ".join(f"{k} {v / events * 1e6:.1f} µs" for k, v in cpu.items())
    return [
        Case(SUITE, name, "s", wall, targets, notes, clock="wall"),
        Case(SUITE, name, "s", cpu, targets, f"{notes}; per event: {per_event}", clock="cpu"),
    ]


def run(options: Options) -> list[Case]:
    """The append suite's cases: one per clock."""
    events = 20_000 if options.quick else 100_000
    peer = HarnessPeer.from_environment()
    if peer is None:
        return _cases(events, options, None)
    with peer:
        return _cases(events, options, peer)
