"""Serve-load suite: ``dsh serve`` under many concurrent chat sessions, beside
pydantic-ai's AG-UI app serving the same scripted conversations.

Each server runs in its own process on 127.0.0.1 (``dsh serve`` on a SQLite store with
its in-process worker; the peer is ``AGUIAdapter.dispatch_request`` mounted in
Starlette, both under Uvicorn with the same settings). One client process runs every
session at once (each starts after a seeded pause under a second): a conversation of
``turns`` prompts, each answered by a scripted model in ``deltas`` text deltas, one
every ``pace`` seconds, identical for both servers (``_serve_script``). Figures
(``_serve_measure``):

- delay added per streamed delta over the in-process stream: arrival at the client
  minus the moment the model emitted the delta in the server, p50 and p99;
- per-step delivery: the same for each reply's last delta (the whole reply there);
- wait from posting a prompt to its first delta (queueing for a turn included);
- server CPU time per turn (session creation included for dsh; the peer has none);
- server CPU per second per open stream of an idle session (a chat tab left open;
  dsh's streams follow the log by polling the store, the peer has no stream between
  runs);
- resident memory per idle session: the server's RSS after the load, once idle,
  minus before, over the sessions.

The peer keeps no conversation: its client sends the whole history with every run
and mints no ids it keeps (its message ids are new each run). dsh stores every
session durably, with the client's ids.

    python bench/run.py --suite serve_load          # 20 sessions, 2 turns each
    python bench/serve_load.py --sessions 200       # the issue's 200 sessions
"""

from __future__ import annotations

import os

import pydantic_ai  # noqa: F401  # the peer's server process needs it: fail early without
from _harness import Case, Options
from _serve_measure import Load, Measurement, measure, percentile
from _serve_script import Script
from _serve_servers import DSH, PEER

SUITE = "serve_load"
SESSIONS_ENV = "DSH_BENCH_SERVE_SESSIONS"
DEFAULT_SESSIONS = 20


def _ratio(values: dict[str, float]) -> str:
    return f"dsh / pydantic-ai = {values[DSH] / values[PEER]:.2f}" if values[PEER] else ""


def _case(name: str, unit: str, values: dict[str, float], notes: str, clock: str) -> Case:
    notes = ", ".join(filter(None, [_ratio(values), notes]))
    return Case(SUITE, name, unit, values, notes=notes, clock=clock)


def cases(runs: dict[str, Measurement], script: Script) -> list[Case]:
    """The suite's cases from one measurement per server."""
    first = runs[DSH]
    size = (
        f"{first.sessions} sessions x {first.turns} turns, replies of {script.deltas} "
        f"deltas every {script.pace * 1e3:g} ms"
    )

    def each(pick: str, fraction: float) -> dict[str, float]:
        return {kind: percentile(getattr(run, pick), fraction) for kind, run in runs.items()}

    result = []
    for label, pick in (
        ("delay added per streamed delta", "delta_delays"),
        ("per-step delivery (a reply's last delta)", "step_delays"),
        ("wait from post to first delta", "first_waits"),
    ):
        for name, fraction in (("p50", 0.5), ("p99", 0.99)):
            result.append(_case(f"{label}, {name}", "s", each(pick, fraction), size, "wall"))
    cpu = {kind: run.cpu_per_turn for kind, run in runs.items()}
    result.append(_case("server CPU time per turn", "s", cpu, "over the whole load", "cpu"))
    rss = {kind: run.rss_per_session for kind, run in runs.items()}
    result.append(_case("resident memory per idle session", "bytes", rss, "RSS growth", "wall"))
    idle = {kind: run.idle_stream_cpu for kind, run in runs.items()}
    notes = "every session's stream open, no turn running; the peer keeps no stream"
    result.append(_case("server CPU per idle open stream, per second", "s", idle, notes, "cpu"))
    walls = {kind: run.wall for kind, run in runs.items()}
    clients = "; ".join(f"{kind} {run.client_cpu:.1f} s" for kind, run in runs.items())
    notes = f"one run; the client's own CPU time: {clients}"
    result.append(_case("wall time of the whole load", "s", walls, notes, "wall"))
    return result


def run(options: Options) -> list[Case]:
    """Both servers under ``DSH_BENCH_SERVE_SESSIONS`` sessions (20 by default)."""
    sessions = int(os.environ.get(SESSIONS_ENV) or DEFAULT_SESSIONS)
    script = Script()
    load = Load(sessions, 1 if options.quick else 2)
    runs = {kind: measure(kind, script, load) for kind in (DSH, PEER)}
    return cases(runs, script)


def main() -> None:
    """``python bench/serve_load.py [--quick] [--sessions N]``: this suite alone."""
    import argparse

    from _harness import print_case

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--quick", action="store_true", help="one turn per session")
    parser.add_argument("--sessions", type=int, help=f"concurrent sessions ({DEFAULT_SESSIONS})")
    args = parser.parse_args()
    if args.sessions:
        os.environ[SESSIONS_ENV] = str(args.sessions)
    for case in run(Options(quick=args.quick)):
        print_case(case)


if __name__ == "__main__":
    main()
