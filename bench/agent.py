"""Agent suite: what the loop costs per turn when the model answers instantly.

- A plain turn (one text answer) and a tool turn (a tool call, the tool, a text answer),
  each in a new conversation, for dsh's ``AgentLoop`` driven through ``run()`` and for
  pydantic-ai's ``Agent.run`` with its ``FunctionModel`` doing the same work. The dsh
  model and turn are the shared harness of ``_instant.py`` (an adapter replaying
  pre-built chunks), so the figure is the loop: inbox, log, derivation, request
  building, assembly, tools.
- The same turns with a ``SqliteSessionStore`` attached. The loop flushes at its
  checkpoints; the store counts flushes and fsyncs. The cost one fsync adds to a
  commit is measured on this disk, interleaved with the turns (a bare SQLite commit
  with ``synchronous=FULL`` minus the same commit with ``synchronous=OFF``), so the
  store's cost above the no-store run can be set against its fsyncs.
- The per-turn cost late in a 1,000-turn conversation (turns 981-1,000) against
  early (turns 1-20): two agents, one fresh and one grown to 980 turns, play turns
  alternately so that machine drift affects both windows alike. Target: the late
  turns within 1.2x of the early ones (the loop's cost is flat in the conversation).

The no-store cases and the growth case are CPU-bound and use the CPU clock; the
store cases wait on fsync and use the wall clock. Target for a turn without a store:
at most 0.1x pydantic-ai's (issue 33).
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from _harness import CPU_CLOCK, Case, Options, Target, compare
from _instant import (
    ANSWER,
    QUESTION,
    SYSTEM,
    TURNS_PER_CALL,
    InstantModel,
    Turn,
    add,
    batch,
    per_turn,
    play_turn,
)
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from dsh_agent import AgentLoop
from dsh_session import Session
from dsh_session.stores import SessionStore, SqliteSessionStore

SUITE = "agent"
CONVERSATION = 1_000
WINDOW = 20
LOOP_OVERHEAD_TARGET = 0.1
"""A dsh turn without a store costs at most this fraction of pydantic-ai's (issue 33:
issue 16's 0.05 set against a harness that keeps no log)."""
FLAT_TARGET = 1.2
"""A late turn of the long conversation costs at most this multiple of an early one."""

# --- the peer: pydantic-ai doing what the instant model does (bench/_instant.py) -------


def _pydantic_ai_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The same behaviour for pydantic-ai's FunctionModel."""
    answered = any(isinstance(part, ToolReturnPart) for part in messages[-1].parts)
    if info.function_tools and not answered:
        return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})])
    return ModelResponse(parts=[TextPart(ANSWER)])


def _pydantic_ai_agent(*, with_tool: bool) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(_pydantic_ai_model), system_prompt=SYSTEM)
    if with_tool:

        async def add(a: int, b: int) -> str:
            """Add two integers."""
            return str(a + b)

        # registered by a call rather than as a decorator: without the bench extra
        # installed, mypy sees pydantic-ai as Any and refuses an untyped decorator
        agent.tool_plain(add)

    return agent


# --- subjects -----------------------------------------------------------------------


def _dsh_agent(*, with_tool: bool, store: SessionStore | None = None) -> AgentLoop:
    return AgentLoop(
        session=Session.create(),
        adapter=InstantModel(),
        provider="bench",
        model="instant",
        system=SYSTEM,
        tools=[add] if with_tool else [],
        store=store,
    )


def _dsh_new_conversation(*, with_tool: bool, store: SessionStore | None = None) -> Turn:
    async def turn() -> None:
        agent = _dsh_agent(with_tool=with_tool, store=store)
        await play_turn(agent)
        if store is not None:
            store.detach(agent.session)  # the turn-end checkpoint made it durable

    return turn


def _pydantic_ai_new_conversation(*, with_tool: bool) -> Turn:
    agent = _pydantic_ai_agent(with_tool=with_tool)

    async def turn() -> None:
        await agent.run(QUESTION)

    return turn


class BareCommits:
    """The SQLite writes of one stored turn without dsh: the same event rows in the
    same number of ``BEGIN IMMEDIATE`` transactions, in WAL mode, with or without the
    fsync that ``synchronous=FULL`` adds to each commit. The difference between the
    two is what the turn's fsyncs cost on this disk."""

    def __init__(self, path: Path, batches: list[list[str]], *, synchronous: str) -> None:
        self._batches = batches
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        self._db.execute("CREATE TABLE IF NOT EXISTS events (seq INTEGER, event TEXT)")

    def __call__(self) -> None:
        db = self._db
        for _ in range(TURNS_PER_CALL):
            for rows in self._batches:
                db.execute("BEGIN IMMEDIATE")
                db.executemany("INSERT INTO events VALUES (?, ?)", enumerate(rows))
                db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()


def _split(rows: list[str], parts: int) -> list[list[str]]:
    """``rows`` in ``parts`` contiguous batches of nearly equal size."""
    size, extra = divmod(len(rows), parts)
    bounds = [index * size + min(index, extra) for index in range(parts + 1)]
    return [rows[bounds[index] : bounds[index + 1]] for index in range(parts)]


# --- cases --------------------------------------------------------------------------


def _no_store_case(loop: asyncio.AbstractEventLoop, options: Options, *, with_tool: bool) -> Case:
    kind = "tool turn" if with_tool else "plain turn"
    values = compare(
        {
            "dsh": batch(loop, _dsh_new_conversation(with_tool=with_tool)),
            "pydantic-ai": batch(loop, _pydantic_ai_new_conversation(with_tool=with_tool)),
        },
        number=1,
        repeats=options.repeats(20),
        clock=CPU_CLOCK,
    )
    return Case(
        SUITE,
        f"{kind}, new conversation, no store",
        "s",
        per_turn(values),
        targets=(Target("pydantic-ai", LOOP_OVERHEAD_TARGET),),
        notes="per turn; pydantic-ai has no log to keep",
        clock="cpu",
    )


def _store_cases(
    loop: asyncio.AbstractEventLoop, options: Options, folder: Path, *, with_tool: bool
) -> list[Case]:
    kind = "tool turn" if with_tool else "plain turn"
    store = SqliteSessionStore(folder / f"{kind.replace(' ', '-')}.db")
    sample = _dsh_agent(with_tool=with_tool, store=store)
    before = (store.stats.flushes, store.stats.fsyncs)
    loop.run_until_complete(play_turn(sample))
    flushes, fsyncs = store.stats.flushes - before[0], store.stats.fsyncs - before[1]
    rows = [event.model_dump_json() for event in sample.session.events]
    steps = sum(1 for event in sample.session.events if event.type == "step/start")
    batches = _split(rows, fsyncs)
    synced = BareCommits(folder / "synced.db", batches, synchronous="FULL")
    unsynced = BareCommits(folder / "unsynced.db", batches, synchronous="OFF")
    try:
        values = per_turn(
            compare(
                {
                    "dsh + sqlite": batch(
                        loop, _dsh_new_conversation(with_tool=with_tool, store=store)
                    ),
                    "dsh": batch(loop, _dsh_new_conversation(with_tool=with_tool)),
                    "bare commits, synced": synced,
                    "bare commits, unsynced": unsynced,
                },
                number=1,
                repeats=options.repeats(20),
            )
        )
    finally:
        loop.run_until_complete(store.close())
        synced.close()
        unsynced.close()
    store_cost = values["dsh + sqlite"] - values["dsh"]
    fsync_cost = max(values["bare commits, synced"] - values["bare commits, unsynced"], 0.0)
    counts = f"per turn of {steps} step(s): {flushes} flushes, {fsyncs} fsyncs, {len(rows)} events"
    return [
        Case(SUITE, f"{kind}, new conversation, SQLite store", "s", values, notes=counts),
        Case(
            SUITE,
            f"{kind}: store cost above no store vs its fsyncs",
            "s",
            {"store cost": store_cost, "fsyncs alone": fsync_cost},
            targets=(Target("fsyncs alone", 1.2, subject="store cost"),),
            notes=f"{counts}; the rest is {(store_cost - fsync_cost) * 1e6:,.0f} µs "
            "of SQLite statements, event JSON and store bookkeeping",
        ),
    ]


def _growth_case(loop: asyncio.AbstractEventLoop, options: Options) -> Case:
    early: list[float] = []
    late: list[float] = []
    for _ in range(options.repeats(5)):
        fresh = _dsh_agent(with_tool=True)
        grown = _dsh_agent(with_tool=True)
        for _ in range(CONVERSATION - WINDOW):
            loop.run_until_complete(play_turn(grown))
        samples: dict[str, list[float]] = {"early": [], "late": []}
        for index in range(WINDOW):
            pair = [("early", fresh), ("late", grown)]
            for name, agent in pair if index % 2 else reversed(pair):
                start = time.process_time()
                loop.run_until_complete(play_turn(agent))
                samples[name].append(time.process_time() - start)
        early.append(statistics.median(samples["early"]))
        late.append(statistics.median(samples["late"]))
    return Case(
        SUITE,
        f"tool turn in a {CONVERSATION}-turn conversation, last {WINDOW} vs first {WINDOW}",
        "s",
        {
            f"last {WINDOW} turns": statistics.median(late),
            f"first {WINDOW} turns": statistics.median(early),
        },
        targets=(Target(f"first {WINDOW} turns", FLAT_TARGET, subject=f"last {WINDOW} turns"),),
        notes="no store; median turn of each window, median over the repeats",
        clock="cpu",
    )


def run(options: Options) -> list[Case]:
    loop = asyncio.new_event_loop()
    folder = Path(tempfile.mkdtemp(prefix="dsh-bench-agent-"))
    try:
        cases = [
            _no_store_case(loop, options, with_tool=False),
            _no_store_case(loop, options, with_tool=True),
            *_store_cases(loop, options, folder, with_tool=False),
            *_store_cases(loop, options, folder, with_tool=True),
            _growth_case(loop, options),
        ]
    finally:
        loop.close()
        shutil.rmtree(folder, ignore_errors=True)
    return cases
