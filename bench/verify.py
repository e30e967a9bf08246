"""Verify suite: ``dsh sessions verify`` on a long session, time and peak memory.

A session of ``TURNS`` turns is played through a real :class:`AgentLoop` with an
instant model (every other turn calls a tool first, so there are about 13.5 events and
1.5 requests per turn: ~100k events for 7,500 turns), stored in a SQLite file, and then
verified by the real command in a child process, as a user would run it (CPU time of
the child, so that other work on the machine hardly moves the figure). The floor is
a child process that only reads the session from the store (what verify must do
before it can re-build anything), so the ratio is the cost of re-building every
request and comparing each with the one before. Peak memory is the child's maximum
resident set size. ``verify --json`` is measured too, with the size of what it prints
against the size of the log itself (``sessions export``): each request is described by
its delta from the one before, so the report stays a fraction of the log.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from _harness import Case, Options, Target

from dsh_agent import AgentLoop, tool
from dsh_agent import run as owned_run
from dsh_llm import (
    BlockEndChunk,
    FinishChunk,
    GenerateRequest,
    StopFinish,
    StreamChunk,
    TextBlock,
    ToolCallBlock,
    ToolCallsFinish,
    ToolResultMessage,
    create_user_message,
)
from dsh_session import Session
from dsh_session.stores import open_store

SUITE = "verify"
TURNS = 7_500
QUICK_TURNS = 2_000

_ANSWER: tuple[StreamChunk, ...] = (
    BlockEndChunk(index=0, block=TextBlock(text="The sum is 3.")),
    FinishChunk(reason=StopFinish()),
)
_CALL: tuple[StreamChunk, ...] = (
    BlockEndChunk(
        index=0, block=ToolCallBlock(call_id="call", name="add", arguments='{"a":1,"b":2}')
    ),
    FinishChunk(reason=ToolCallsFinish()),
)

_REPORTING_PEAK = """
import asyncio, sys

def report_peak():
    with open("/proc/self/status") as status, open(sys.argv[1], "w") as out:
        out.write(next(line for line in status if line.startswith("VmHWM")).split(":")[1])

async def read_only(url, session_id):
    from dsh_session.stores import open_store
    async with open_store(url) as store:
        await store.read(session_id)

try:
    if sys.argv[2] == "dsh_cli":
        from dsh_cli import main
        code = main(sys.argv[3:])
    else:
        asyncio.run(read_only(*sys.argv[4:]))
        code = 0
finally:
    report_peak()
sys.exit(code)
"""
"""Runs ``dsh`` (or only the store read) and writes its peak resident set (VmHWM,
kilobytes) to the file named first."""


class AlternatingModel:
    """Answers at once; on every other turn it calls ``add`` before answering. It keeps
    no requests, so building a long session costs linear memory."""

    def __init__(self) -> None:
        self.turns = 0

    async def stream(self, request: GenerateRequest) -> AsyncIterator[StreamChunk]:
        last = request.messages[-1]
        if not isinstance(last, ToolResultMessage):
            self.turns += 1
        wants_tool = self.turns % 2 == 1 and not isinstance(last, ToolResultMessage)
        for chunk in _CALL if wants_tool else _ANSWER:
            yield chunk


@tool
async def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


async def build_session(url: str, turns: int) -> Session:
    """Play ``turns`` turns in memory, then store the session in one flush."""
    agent = AgentLoop(
        session=Session.create(),
        adapter=AlternatingModel(),
        provider="bench",
        model="instant",
        tools=[add],
    )
    for turn in range(turns):
        prompt = create_user_message(content=f"question {turn}", source={"kind": "user"})
        await owned_run(agent, prompt)
    async with open_store(url) as store:
        store.attach(agent.session)
        await store.flush(agent.session)
        store.detach(agent.session)
    return agent.session


def _measure(command: Sequence[str]) -> tuple[float, int, int]:
    """CPU seconds (user + system), peak resident bytes and bytes written to standard
    output of one child process running ``command``. The peak is the child's own
    ``VmHWM``, read as it exits: ``ru_maxrss`` would count the pages of this (large)
    process that the child shared before it exec'd. CPU time, unlike wall time, hardly
    moves with other work on the machine."""
    with (
        tempfile.NamedTemporaryFile("r", suffix=".peak") as peak,
        tempfile.TemporaryFile() as output,
    ):
        child = subprocess.Popen(
            [sys.executable, "-c", _REPORTING_PEAK, peak.name, *command], stdout=output
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise subprocess.CalledProcessError(child.returncode, command)
        kilobytes = int(peak.read().split()[0])
        written = output.seek(0, os.SEEK_END)
    return usage.ru_utime + usage.ru_stime, kilobytes * 1024, written


def run(options: Options) -> list[Case]:
    turns = QUICK_TURNS if options.quick else TURNS
    repeats = 1 if options.quick else 3
    with tempfile.TemporaryDirectory(prefix="dsh-bench-verify-") as directory:
        url = f"sqlite:///{Path(directory) / 'verify.db'}"
        session = asyncio.run(build_session(url, turns))
        verify = ["dsh_cli", "sessions", "verify", "--store", url, session.id]
        commands = {
            "dsh verify": verify,
            "dsh verify --json": [*verify, "--json"],
            "read only": ["dsh_session.stores", "read", url, session.id],
        }
        samples: dict[str, list[tuple[float, int, int]]] = {name: [] for name in commands}
        for _ in range(repeats):
            for name, command in commands.items():
                samples[name].append(_measure(command))
        export = ["dsh_cli", "sessions", "export", "--store", url, session.id]
        log_bytes = _measure([*export, "--format", "jsonl"])[2]
    size = f"{session.seq:,} events, {session.last_turn:,} turns"
    # --json also encodes a report a third the size of the log (indented JSON, which
    # Python's json module writes with its pure-Python encoder): hence its own margin.
    targets = (
        Target("read only", 2.0, subject="dsh verify"),
        Target("read only", 2.5, subject="dsh verify --json"),
    )
    return [
        Case(
            SUITE,
            f"verify a {size} session (child process)",
            "s",
            {name: statistics.median(t for t, _, _ in runs) for name, runs in samples.items()},
            targets=targets,
            clock="cpu",
        ),
        Case(
            SUITE,
            f"peak resident memory verifying {size}",
            "bytes",
            {name: float(max(m for _, m, _ in runs)) for name, runs in samples.items()},
            targets=targets,
        ),
        Case(
            SUITE,
            f"verify --json output for {size}, against the log's JSONL export",
            "bytes",
            {
                "dsh verify --json": float(samples["dsh verify --json"][0][2]),
                "log (export jsonl)": float(log_bytes),
            },
            targets=(Target("log (export jsonl)", 0.5, subject="dsh verify --json"),),
        ),
    ]
