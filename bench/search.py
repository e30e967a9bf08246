"""Search suite: full-text search over session logs, and what its index costs appends.

- Search latency, p50 and p99 over a mix of queries (a common word, a rare word, two
  words, a phrase, a prefix, an OR, a NOT), on a generated corpus of sessions of turns
  (prompt, tool call, tool result, answer; words drawn from a Zipf vocabulary of
  5,000 words), per backend: SQLite schema 17 (FTS5 in the attached index file), dsh's
  SQLite layout 1 (FTS5 in the same file), PostgreSQL (``tsvector`` + GIN) and JSONL
  (a scan of every log). The corpus size is printed with each case.
- Append throughput with the index on vs off: a durable flush of one turn (~20 events)
  and of ~100 events to SQLite schema 17 and PostgreSQL, with the index written in the
  append's transaction, against the same store with its index writes switched off.
  Target: on <= 1.2x off. (Layout 1's flush writes no index: each search catches the
  index up first, docs/decisions/2026-12-06-search-index-after-commit.md; its cost is
  in the search latency of a corpus just written.)
- Replay of a long recorded session (``dsh_agent.testing.replay``, every request
  compared) against running the same conversation with the scripted model.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from _harness import Case, Options, Target

from dsh_agent import AgentLoop, tool
from dsh_agent.testing import replay
from dsh_llm import (
    GenerateRequest,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    create_assistant_message,
    create_tool_result_message,
    create_user_message,
)
from dsh_llm.testing import FunctionAdapter, Reply
from dsh_session import Session
from dsh_session.stores import (
    JsonlSessionStore,
    PostgresSessionStore,
    SessionStore,
    SqliteSessionStore,
)
from dsh_session.stores._sqlite_layout_one import create_layout_one

SUITE = "search"
MODEL = {"provider": "bench", "model": "scripted"}
VOCABULARY = [f"w{n:04d}" for n in range(5_000)]
WEIGHTS = [1 / (rank + 1) for rank in range(len(VOCABULARY))]
QUERIES = (
    "w0003",  # common
    "w4321",  # rare
    "w0010 w0200",  # both
    '"w0001 w0002"',  # a phrase
    "w012*",  # a prefix
    "w1500 OR w2500",
    "w0050 NOT w0001",
)


# --- the corpus ----------------------------------------------------------------------


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(VOCABULARY, WEIGHTS, k=count))


def _turns(session: Session, rng: random.Random) -> Iterator[None]:
    """Whole turns as the loop writes them, words at random; yields after each event."""
    while True:
        turn = session.last_turn + 1
        for kind, data in (
            ("turn/start", {"turn": turn}),
            ("step/start", {"turn": turn, "step": 1}),
        ):
            session.append(kind, data)
            yield
        session.append(
            "user/message", create_user_message(content=_words(rng, 20), source={"kind": "user"})
        )
        yield
        if session.request_header is None:
            session.append("request/header", {"header": {"config": MODEL}, "reason": "initial"})
            yield
        for step, call in ((1, f"call-{turn}"), (2, None)):
            first = session.seq
            for index in range(4):
                chunk = {"type": "text-delta", "index": 0, "text": f"t{index} "}
                session.append("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk})
                yield
            content: list[Any] = [TextBlock(text=_words(rng, 40))]
            if call is not None:
                content.append(ToolCallBlock(call_id=call, name="grep", arguments='{"q": "x"}'))
            message = create_assistant_message(content=content, source=MODEL)
            session.append(
                "assistant/message",
                {"turn": turn, "step": step, "message": message},
                source_event_seqs=range(first, session.seq),
            )
            yield
            if call is not None:
                started = session.append(
                    "tool/call",
                    {"turn": turn, "step": 1, "call_id": call, "name": "grep", "arguments": "{}"},
                )
                yield
                result = create_tool_result_message(call_id=call, content=_words(rng, 60))
                session.append(
                    "tool/result",
                    {"turn": turn, "step": 1, "message": result},
                    source_event_seqs=[started.seq],
                )
                yield
                session.append("step/end", {"turn": turn, "step": 1})
                yield
                session.append("step/start", {"turn": turn, "step": 2})
                yield
        session.append("step/end", {"turn": turn, "step": 2})
        yield
        session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        yield


def _sessions(sessions: int, events: int) -> Iterator[Session]:
    """``sessions`` sessions of about ``events`` events each (whole turns), one seed per
    session, so every backend gets the same words; made one at a time."""
    for number in range(sessions):
        session = Session.create(f"s{number:05d}")
        appender = _turns(session, random.Random(number))
        while session.seq < events or session.events[-1].type != "turn/end":
            next(appender)
        yield session


async def _fill(stores: dict[str, SessionStore], sessions: int, events: int) -> dict[str, float]:
    """Write the corpus to every store, each session generated once and written whole
    by one durable flush per store (the stores' batch path); seconds spent per store."""
    spent = dict.fromkeys(stores, 0.0)
    for session in _sessions(sessions, events):
        for name, store in stores.items():
            start = time.perf_counter()
            store.attach(session)
            await store.flush(session)
            store.detach(session)
            spent[name] += time.perf_counter() - start
    return spent


async def _latencies(store: SessionStore, rounds: int) -> list[float]:
    await store.search(QUERIES[0])  # reconcile and warm the caches, untimed
    samples = []
    for _ in range(rounds):
        for query in QUERIES:
            start = time.perf_counter()
            await store.search(query)
            samples.append(time.perf_counter() - start)
    return samples


async def _measure(
    openers: dict[str, Callable[[], SessionStore]], sessions: int, events: int, rounds: int
) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Fill every store, then open each again and time its searches (a scan, which
    reads every log, takes a tenth of the rounds)."""
    stores = {name: open_store() for name, open_store in openers.items()}
    try:
        for store in stores.values():
            await store.__aenter__()
        filled = await _fill(stores, sessions, events)
    finally:
        for store in stores.values():
            await store.close()
    samples = {}
    for name, open_store in openers.items():
        async with open_store() as store:
            scans = "scan" in name
            samples[name] = await _latencies(store, max(1, rounds // 10) if scans else rounds)
    return filled, samples


def _p(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@contextmanager
def _postgres() -> Iterator[str | None]:
    """A DSN of a fresh schema: on ``DSH_BENCH_POSTGRES_DSN``, else on a throwaway
    cluster; ``None`` (the PostgreSQL cases left out) without psycopg or binaries."""
    try:
        import psycopg

        from dsh_session.errors import PostgresUnavailableError
        from dsh_session.stores.postgres.throwaway import ThrowawayServer
    except ImportError:
        yield None
        return
    given = os.environ.get("DSH_BENCH_POSTGRES_DSN")
    try:
        server = None if given else ThrowawayServer()
    except PostgresUnavailableError:
        yield None
        return
    if server is not None:
        server.start()
    try:
        dsn = given or server.dsn  # type: ignore[union-attr]
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(
                "DROP SCHEMA IF EXISTS bench_search CASCADE; CREATE SCHEMA bench_search"
            )
        yield f"{dsn}{'&' if '?' in dsn else '?'}options=-csearch_path%3Dbench_search"
    finally:
        if server is not None:
            server.stop()


def _corpus(options: Options) -> tuple[int, int]:
    """Sessions and events per session: ``DSH_BENCH_SEARCH_FULL=1`` is the issue's
    1,000 x 1,000 (1M events); else ``DSH_BENCH_SEARCH_SESSIONS`` (100; 20 quick) and
    ``DSH_BENCH_SEARCH_EVENTS`` (1,000)."""
    if os.environ.get("DSH_BENCH_SEARCH_FULL") == "1":
        return 1_000, 1_000
    sessions = 20 if options.quick else int(os.environ.get("DSH_BENCH_SEARCH_SESSIONS", "100"))
    return sessions, int(os.environ.get("DSH_BENCH_SEARCH_EVENTS", "1000"))


def _chosen(variable: str, every: tuple[str, ...]) -> tuple[str, ...]:
    """The names a comma-separated environment variable picks (all when unset)."""
    given = os.environ.get(variable)
    if not given:
        return every
    picked = tuple(name.strip() for name in given.split(","))
    unknown = sorted(set(picked) - set(every))
    if unknown:
        raise SystemExit(f"{variable}: unknown {unknown}; choose from {list(every)}")
    return picked


BACKENDS = ("schema17", "layout1", "jsonl", "postgresql")
PARTS = ("append", "search", "replay")


def _search_cases(options: Options) -> list[Case]:
    sessions, events = _corpus(options)
    backends = _chosen("DSH_BENCH_SEARCH_BACKENDS", BACKENDS)
    rounds = options.repeats(20)
    cases = []
    postgres = _postgres() if "postgresql" in backends else nullcontext(None)
    with tempfile.TemporaryDirectory() as folder, postgres as dsn:
        root = Path(folder)
        stores: dict[str, Callable[[], SessionStore]] = {
            "sqlite (schema 17)": lambda: SqliteSessionStore(root / "harness.db"),
            "sqlite (layout 1)": lambda: SqliteSessionStore(
                root / "one.db"
                if (root / "one.db").exists()
                else create_layout_one(root / "one.db")
            ),
            "jsonl (scan)": lambda: JsonlSessionStore(root / "jsonl"),
            "postgresql": lambda: PostgresSessionStore(str(dsn)),
        }
        keys = dict(zip(BACKENDS, stores, strict=True))
        if dsn is None:
            backends = tuple(b for b in backends if b != "postgresql")
        chosen = {keys[b]: stores[keys[b]] for b in backends}
        filled, samples = asyncio.run(_measure(chosen, sessions, events, rounds))
        corpus = f"{sessions} sessions x ~{events} events"
        p50 = {name: statistics.median(values) for name, values in samples.items()}
        p99 = {name: _p(values, 0.99) for name, values in samples.items()}
        cases.append(Case(SUITE, f"search latency p50 ({corpus})", "s", p50, notes="7 queries"))
        cases.append(Case(SUITE, f"search latency p99 ({corpus})", "s", p99, notes="7 queries"))
        cases.append(
            Case(
                SUITE,
                f"writing the corpus ({corpus})",
                "s",
                filled,
                notes="one durable flush per session",
            )
        )
    return cases


# --- append with the index on and off ------------------------------------------------


class _Flusher:
    """A session attached to a store, and the next batch of events appended untimed."""

    def __init__(self, store: SessionStore, size: int, seed: int) -> None:
        self.store, self.size = store, size
        self.session = Session.create()
        store.attach(self.session)
        self._events = _turns(self.session, random.Random(seed))

    def prepare(self) -> None:
        for _ in range(self.size):
            next(self._events)


async def _dsh_flush(store: SessionStore, size: int) -> _Flusher:
    flusher = _Flusher(store, size, seed=size)
    await store.flush(flusher.session)
    return flusher


async def _time_flushes(subjects: dict[str, _Flusher], *, batches: int) -> dict[str, float]:
    """Median seconds per durable flush of one batch; subjects take turns batch by
    batch (rotating), preparation untimed, the collector run between rounds."""
    samples: dict[str, list[float]] = {name: [] for name in subjects}
    order = list(subjects)
    gc.disable()
    try:
        for batch in range(batches + 10):
            if batch % 50 == 0:
                gc.collect()
            shift = batch % len(order)
            for name in order[shift:] + order[:shift]:
                subject = subjects[name]
                subject.prepare()
                start = time.perf_counter()
                await subject.store.flush(subject.session)
                if batch >= 10:
                    samples[name].append(time.perf_counter() - start)
    finally:
        gc.enable()
    return {name: statistics.median(values) for name, values in samples.items()}


def _index_off(store: SqliteSessionStore) -> SqliteSessionStore:
    """The same store with its index writes switched off (the benchmark's floor)."""
    store._layout._search.add = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    return store


class _PostgresIndexOff(PostgresSessionStore):
    """A PostgreSQL store whose flushes write no index rows (the benchmark's floor)."""

    def _write_batch(self, batch: Any) -> None:
        from dsh_session.stores.postgres import _search

        kept = _search.index_rows
        _search.index_rows = lambda *args, **kwargs: ()
        try:
            super()._write_batch(batch)
        finally:
            _search.index_rows = kept


async def _time_sqlite(root: Path, size: int, batches: int) -> dict[str, float]:
    """Schema 17 (a new file's layout), whose flush writes the index."""
    on = SqliteSessionStore(root / f"on-{size}.db")
    off = _index_off(SqliteSessionStore(root / f"off-{size}.db"))
    async with on, off:
        subjects = {
            "index on": await _dsh_flush(on, size),
            "index off": await _dsh_flush(off, size),
        }
        return await _time_flushes(subjects, batches=batches)


async def _time_postgres(dsn: str, size: int, batches: int) -> dict[str, float]:
    async with PostgresSessionStore(dsn) as on, _PostgresIndexOff(dsn) as off:
        subjects = {
            "index on": await _dsh_flush(on, size),
            "index off": await _dsh_flush(off, size),
        }
        return await _time_flushes(subjects, batches=batches)


def _append_cases(options: Options) -> list[Case]:
    batches = options.repeats(200)
    target = (Target("index off", 1.2, subject="index on"),)
    cases = []
    with tempfile.TemporaryDirectory() as folder:
        for size in (20, 100):
            values = asyncio.run(_time_sqlite(Path(folder), size, batches))
            name = f"durable flush of {size} events, SQLite schema 17"
            cases.append(Case(SUITE, name, "s", values, targets=target))
    with _postgres() as dsn:
        for size in (20, 100) if dsn is not None else ():
            values = asyncio.run(_time_postgres(str(dsn), size, batches))
            name = f"durable flush of {size} events, PostgreSQL"
            cases.append(Case(SUITE, name, "s", values, targets=target))
    return cases


# --- replay vs the scripted run ------------------------------------------------------


@tool
async def grep(pattern: str) -> str:
    """Search the files."""
    return f"3 matches for {pattern}"


def _model(request: GenerateRequest) -> str | Reply:
    if isinstance(request.messages[-1], ToolResultMessage):
        return "Found it. " + "detail " * 20
    return Reply(
        tool_calls=(
            {"call_id": f"c{len(request.messages)}", "name": "grep", "arguments": {"pattern": "x"}},
        )
    )


def _factory(session: Session, adapter: Any) -> AgentLoop:
    return AgentLoop(
        session=session,
        adapter=adapter,
        provider="bench",
        model="scripted",
        system="You grep.",
        tools=[grep],
    )


async def _run_scripted(turns: int) -> Session:
    session = Session.create()
    agent = _factory(session, FunctionAdapter(_model))
    for turn in range(turns):
        agent.followup(create_user_message(content=f"find thing {turn}", source={"kind": "user"}))
        await agent.when_idle()
    await agent.aclose()
    return session


def _replay_cases(options: Options) -> list[Case]:
    turns = 100 if options.quick else 1_000
    start = time.perf_counter()
    recorded = asyncio.run(_run_scripted(turns))
    scripted = time.perf_counter() - start
    start = time.perf_counter()
    result = asyncio.run(replay(recorded, _factory))
    replayed = time.perf_counter() - start
    assert result.ok, str(result)
    return [
        Case(
            SUITE,
            f"a {turns}-turn session ({recorded.seq} events, {result.requests} requests)",
            "s",
            {"replay": replayed, "scripted run": scripted},
            notes="one run each",
        )
    ]


def run(options: Options) -> list[Case]:
    """The parts ``DSH_BENCH_SEARCH_PARTS`` names (all by default)."""
    parts = {"append": _append_cases, "search": _search_cases, "replay": _replay_cases}
    return [
        case for part in _chosen("DSH_BENCH_SEARCH_PARTS", PARTS) for case in parts[part](options)
    ]


def main() -> None:
    """``python bench/search.py [--quick] [--full | --sessions N --events N]
    [--backend NAME ...] [--part NAME ...]``: this suite alone, sized and narrowed."""
    import argparse

    from _harness import print_case

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--full", action="store_true", help="1,000 sessions x 1,000 events")
    parser.add_argument("--sessions", type=int)
    parser.add_argument("--events", type=int, help="events per session")
    parser.add_argument("--backend", action="append", choices=BACKENDS)
    parser.add_argument("--part", action="append", choices=PARTS)
    args = parser.parse_args()
    settings = {
        "DSH_BENCH_SEARCH_FULL": "1" if args.full else None,
        "DSH_BENCH_SEARCH_SESSIONS": args.sessions,
        "DSH_BENCH_SEARCH_EVENTS": args.events,
        "DSH_BENCH_SEARCH_BACKENDS": ",".join(args.backend or ()),
        "DSH_BENCH_SEARCH_PARTS": ",".join(args.part or ()),
    }
    os.environ.update({key: str(value) for key, value in settings.items() if value})
    for case in run(Options(quick=args.quick)):
        print_case(case)


if __name__ == "__main__":
    main()
