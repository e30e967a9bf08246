"""Scale suite, long sessions: a 1,000,000-event session in each store form.

One session of the session suite's turn mix (prompt, request header once, streamed
chunks, assistant messages, a tool call and result, step and turn bounds) is written at
two sizes, ``small`` and ``large`` events (``--full-scale``: 100k and 1M; default 10k
and 100k; ``--quick``: 10k and 50k), to each store form: the harness's zstd JSONL
(``JsonlSessionStore``'s default form), SQLite schema 17 (``SqliteSessionStore``'s new
database) and PostgreSQL (``DSH_BENCH_POSTGRES_DSN`` or a throwaway cluster). Each is
loaded once in this process first (the first load of a closed log adds its
``session/end-seed``, durably), so every timed load reads the same log.

Then, in a fresh child process per measurement, so memory is the child's own:

- loading it (``store.load``: read, validate, repair check, attach): CPU time (wall noted),
  and the peak resident memory the load adds (VmHWM after the load minus the resident
  set before it). Target: the large figure at most 1.1x the small one times the size
  ratio (issue 33: 1M at most 11x 100k);
- ``dsh sessions verify`` of it (CPU time, less that of a child that only starts the
  command and prints its help, the fastest of ``VERIFY_SAMPLES`` runs of each for the
  small session, whose difference is small; and peak resident memory of the command's
  process), with the same linearity target;
- appending one turn (19 events) to the loaded session and flushing it (durable: the
  store's commit and fsync), against the same turn appended to and flushed for a new
  session of the same store, interleaved, median of ``APPEND_REPEATS``. Target: at most
  1.2x the new session's, CPU time (the wall time, noted, adds the fsync, whose length
  is the disk's and swings between repeats on a shared machine).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _harness import Case, Options, Target
from _postgres import schema, server
from session import _session_with
from verify import _measure

from dsh_session import Session
from dsh_session.stores import open_store

SUITE = "scale_long"
SIZES = {"full": (100_000, 1_000_000), "default": (10_000, 100_000), "quick": (10_000, 50_000)}
LINEAR_MARGIN = 1.1
APPEND_TARGET = 1.2
APPEND_REPEATS = 30
VERIFY_SAMPLES = 3

_CHILD = r"""
import asyncio, json, statistics, sys, time
from itertools import islice

sys.path.insert(0, sys.argv[3])
from session import _turn

from dsh_session import Session
from dsh_session.stores import open_store


def status(field):
    with open("/proc/self/status") as lines:
        return int(next(l for l in lines if l.startswith(field)).split()[1]) * 1024


async def main(url, session_id, repeats):
    async with open_store(url) as store:
        before = status("VmRSS")
        wall, cpu = time.perf_counter(), time.process_time()
        session = await store.load(session_id)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        peak = status("VmHWM") - before
        fresh = Session.create()
        store.attach(fresh)
        for _ in _turn(fresh):
            pass
        await store.flush(fresh)
        times = {"long": [], "new": [], "long wall": [], "new wall": []}
        for repeat in range(repeats):
            pair = [("long", session), ("new", fresh)]
            for name, target in pair if repeat % 2 else reversed(pair):
                start, started = time.process_time(), time.perf_counter()
                for _ in _turn(target):
                    pass
                await store.flush(target)
                times[name].append(time.process_time() - start)
                times[name + " wall"].append(time.perf_counter() - started)
        figures = {"events": session.seq, "load_wall": wall, "load_cpu": cpu, "load_peak": peak}
        figures.update({f"append {k}": statistics.median(v) for k, v in times.items()})
        print(json.dumps(figures))


asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[4])))
"""
"""Loads the session named by argv[2] from the store at argv[1], then times turns
appended to it and to a new session (argv[4] repeats each); prints JSON."""


@contextmanager
def _stores(directory: Path) -> Iterator[dict[str, str]]:
    """The URL of each store form."""
    with server() as dsn:
        yield {
            "zstd JSONL": f"jsonl:///{directory / 'jsonl'}",
            "SQLite schema 17": f"sqlite:///{directory / 'sessions.db'}",
            "PostgreSQL": schema(dsn, "bench_scale_long"),
        }


async def _write(urls: dict[str, str], sizes: tuple[int, ...]) -> dict[int, str]:
    """Write a session of each size to every store; load it once (its end-seed)."""
    ids: dict[int, str] = {}
    for size in sizes:
        started = time.perf_counter()
        session = _session_with(size, f"long-{size}")
        ids[size] = session.id
        _progress(f"built {size:,} events", started)
        for form, url in urls.items():
            started = time.perf_counter()
            async with open_store(url) as store:
                store.attach(session)
                await store.flush(session)
                store.detach(session)
                loaded = await store.load(session.id)
                store.detach(loaded)
                _check_unique_ids(loaded)
                del loaded
            _progress(f"{form}: {size:,} events written, loaded once, ids checked", started)
        del session
    return ids


def _progress(done: str, started: float) -> None:
    print(f"  [{done} in {time.perf_counter() - started:.0f} s]", flush=True)


def _check_unique_ids(session: Session) -> None:
    """Refuse a built log whose surface repeats a message id (no id appears twice)."""
    ids = [message.id for message in session.derive_messages()]
    if len(set(ids)) != len(ids):
        raise AssertionError(f"session {session.id}: a message id appears twice")


def _child(url: str, session_id: str, repeats: int) -> dict[str, float]:
    bench = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, url, session_id, bench, str(repeats)],
        check=True,
        capture_output=True,
        text=True,
    )
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def _linear(small: int, large: int) -> float:
    return LINEAR_MARGIN * large / small


def _cases(form: str, url: str, ids: dict[int, str], repeats: int) -> list[Case]:
    small, large = sorted(ids)
    loads = {size: _child(url, ids[size], repeats) for size in (small, large)}
    # the fastest of VERIFY_SAMPLES runs of the small verify and of the command's own
    # start (interpreter, imports: a child printing help), whose difference is small
    verify = {
        size: min(
            _measure(["dsh_cli", "sessions", "verify", "--store", url, ids[size]])
            for _ in range(VERIFY_SAMPLES if size == small else 1)
        )
        for size in (small, large)
    }
    start_up = min(_measure(["dsh_cli", "sessions", "--help"])[0] for _ in range(VERIFY_SAMPLES))
    names = {size: f"{size // 1000:,}k events" for size in (small, large)}
    big, little = names[large], names[small]
    linear = (Target(little, _linear(small, large), subject=big),)
    appended = loads[large]
    return [
        Case(
            SUITE,
            f"{form}: load a {big} vs a {little} session (child process)",
            "s",
            {big: loads[large]["load_cpu"], little: loads[small]["load_cpu"]},
            targets=linear,
            notes=f"wall {loads[large]['load_wall']:.2f} s vs {loads[small]['load_wall']:.2f} s",
            clock="cpu",
        ),
        Case(
            SUITE,
            f"{form}: peak memory the load adds, {big} vs {little}",
            "bytes",
            {big: loads[large]["load_peak"], little: loads[small]["load_peak"]},
            targets=linear,
            notes=f"{loads[large]['load_peak'] / appended['events']:,.0f} bytes an event",
        ),
        Case(
            SUITE,
            f"{form}: dsh sessions verify, {big} vs {little} (child process)",
            "s",
            {big: verify[large][0] - start_up, little: verify[small][0] - start_up},
            targets=linear,
            notes=f"less the {start_up:.2f} s of a child that starts and prints help; "
            f"fastest of {VERIFY_SAMPLES} for {little} and the start; "
            f"peak RSS {verify[large][1] / 2**20:,.0f} MiB vs {verify[small][1] / 2**20:,.0f} MiB",
            clock="cpu",
        ),
        Case(
            SUITE,
            f"{form}: peak memory of verify, {big} vs {little}",
            "bytes",
            {big: float(verify[large][1]), little: float(verify[small][1])},
            targets=linear,
        ),
        Case(
            SUITE,
            f"{form}: append and flush a turn (19 events) to the {big} session vs a new one",
            "s",
            {f"{big} session": appended["append long"], "new session": appended["append new"]},
            targets=(Target("new session", APPEND_TARGET, subject=f"{big} session"),),
            notes=f"median of {repeats} each, interleaved; durable flush; wall (the fsync "
            f"is the disk's) {appended['append long wall'] * 1e3:.2f} ms vs "
            f"{appended['append new wall'] * 1e3:.2f} ms",
            clock="cpu",
        ),
    ]


def run(options: Options) -> list[Case]:
    scale = "full" if options.full_scale else "quick" if options.quick else "default"
    sizes = SIZES[scale]
    repeats = APPEND_REPEATS if not options.quick else 10
    cases: list[Case] = []
    with (
        tempfile.TemporaryDirectory(prefix="dsh-bench-scale-long-") as folder,
        _stores(Path(folder)) as urls,
    ):
        ids = asyncio.run(_write(urls, sizes))
        for form, url in urls.items():
            cases += _cases(form, url, ids, repeats)
    return cases
