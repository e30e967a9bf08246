"""How long an ``AgentLoop`` run takes to reach ``TurnFailed`` against a server that
is not there or does not answer, with the adapter's default timeouts: one attempt
(``retry=None``) against the default ``RetryPolicy`` (five retries, 0.5 s doubling).

Scenarios, all on this machine: a port nobody listens on; a host under ``.invalid``
(resolution fails without a network); a listener whose accept queue is full (the
connect hangs); a server that accepts and never answers; one that sends its headers,
then nothing. They run concurrently (each is a wait), one run each; the figure is the
timeouts and the backoff, not dsh. ``--quick`` measures one attempt only (the default
policy's hung cases take over six minutes)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from _harness import Case, Options

import dsh_agent
from dsh_agent import AgentLoop, RetryPolicy, TurnFailed
from dsh_llm.providers import OpenAIChatAdapter
from dsh_session import LlmRetryEvent, Session

Scenario = Callable[[], AbstractAsyncContextManager[str]]


@asynccontextmanager
async def _refused() -> AsyncIterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield f"http://127.0.0.1:{port}/v1"


@asynccontextmanager
async def _unresolvable() -> AsyncIterator[str]:
    yield "http://llm.nowhere.invalid:8080/v1"


@asynccontextmanager
async def _never_accepted() -> AsyncIterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = [socket.socket() for _ in range(4)]
    for filler in fillers:
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
    await asyncio.sleep(0.2)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def _silent_server(head: bytes) -> Scenario:
    @asynccontextmanager
    async def serve() -> AsyncIterator[str]:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(head)
                await writer.drain()
                await reader.read()  # until the client hangs up
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        try:
            yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        finally:
            server.close()

    return serve


SCENARIOS: dict[str, Scenario] = {
    "port nobody listens on": _refused,
    "host that does not resolve (.invalid)": _unresolvable,
    "connect never accepted (full backlog)": _never_accepted,
    "accepts, never answers": _silent_server(b""),
    "headers, then nothing": _silent_server(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    ),
}


async def _to_failure(scenario: Scenario, retry: RetryPolicy | None) -> tuple[float, int, str]:
    """Seconds to ``TurnFailed``, retries made, and the failure's line."""
    async with scenario() as url:
        agent = AgentLoop(
            session=Session.create(),
            adapter=OpenAIChatAdapter(base_url=url, api_key="k"),
            provider="openai",
            model="m",
            retry=retry,
        )
        start = time.perf_counter()
        try:
            await dsh_agent.run(agent, "anyone there?")
        except TurnFailed as failed:
            elapsed = time.perf_counter() - start
            retries = sum(isinstance(event, LlmRetryEvent) for event in failed.result.events)
            line = str(failed)
        else:
            raise AssertionError("a dead server answered")
        finally:
            await agent.aclose()
    return elapsed, retries, line


async def _measure(policies: dict[str, RetryPolicy | None]) -> list[Case]:
    runs: list[Awaitable[tuple[float, int, str]]] = [
        _to_failure(scenario, policy)
        for scenario in SCENARIOS.values()
        for policy in policies.values()
    ]
    results = iter(await asyncio.gather(*runs))
    cases = []
    for name in SCENARIOS:
        measured = {subject: next(results) for subject in policies}
        notes = "; ".join(
            f"{subject}: {retries} retries" for subject, (_, retries, _) in measured.items()
        )
        last_line = list(measured.values())[-1][2]
        cases.append(
            Case(
                suite="transport_failures",
                name=name,
                unit="s",
                values={subject: seconds for subject, (seconds, _, _) in measured.items()},
                notes=f"{notes}; says: {last_line}",
            )
        )
    return cases


def run(options: Options) -> list[Case]:
    policies: dict[str, RetryPolicy | None] = {"one attempt (retry=None)": None}
    if not options.quick:
        policies["default RetryPolicy"] = RetryPolicy()
    return asyncio.run(_measure(policies))
