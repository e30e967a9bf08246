"""Tools suite: five tool calls of 50 ms each in one step, concurrency-safe vs not.

The model asks for five calls at once; each tool sleeps 50 ms (an HTTP lookup, say).
Marked ``concurrency_safe=True`` they run in one pool and the step's tools should
take about 50 ms; unmarked they run one after another (about 250 ms). The figure is
the wall time of the whole turn (two model steps with an instant scripted model), so
the loop's own cost is included.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from _harness import Case, Options, Target, compare

from dsh_agent import AgentLoop, Tool, tool
from dsh_agent import run as owned_run
from dsh_llm import create_user_message
from dsh_llm.testing import ScriptedAdapter, reply
from dsh_session import Session

SUITE = "tools"
CALLS = 5
TOOL_SECONDS = 0.05


def _lookup(concurrency_safe: bool) -> Tool[object]:
    @tool(name="lookup", concurrency_safe=concurrency_safe)
    async def lookup(key: str) -> str:
        """Look a key up (50 ms of waiting)."""
        await asyncio.sleep(TOOL_SECONDS)
        return key

    return lookup


def _turn(loop: asyncio.AbstractEventLoop, concurrency_safe: bool) -> Callable[[], None]:
    lookup = _lookup(concurrency_safe)
    calls = [
        {"call_id": f"c{i}", "name": "lookup", "arguments": {"key": f"k{i}"}} for i in range(CALLS)
    ]

    async def one_turn() -> None:
        agent = AgentLoop(
            session=Session.create(),
            adapter=ScriptedAdapter([reply(tool_calls=calls), "done"]),
            provider="bench",
            model="scripted",
            tools=[lookup],
        )
        result = await owned_run(
            agent, create_user_message(content="look up", source={"kind": "user"})
        )
        assert result.final_response == "done"
        await agent.aclose()

    return lambda: loop.run_until_complete(one_turn())


def run(options: Options) -> list[Case]:
    loop = asyncio.new_event_loop()
    try:
        values = compare(
            {
                "5 safe tools (parallel)": _turn(loop, True),
                "5 unmarked tools (serial)": _turn(loop, False),
            },
            number=1,
            repeats=options.repeats(12),
        )
    finally:
        loop.close()
    parallel = values["5 safe tools (parallel)"]
    return [
        Case(
            SUITE,
            f"{CALLS} tool calls of {TOOL_SECONDS * 1e3:.0f} ms in one step, whole turn",
            "s",
            values,
            targets=(Target("5 unmarked tools (serial)", 0.3, subject="5 safe tools (parallel)"),),
            notes=f"the parallel turn takes {(parallel - TOOL_SECONDS) * 1e3:,.1f} ms over 50 ms",
        )
    ]
