"""``dsh worker``: serve the sessions of a store that have mailbox input.

``--agent module:factory`` names the function that builds a session's loop,
``factory(session, store) -> AgentLoop`` (it may be async); the module is imported from
the current directory or the Python path. The worker runs until SIGINT or SIGTERM, then
closes the loops it serves (a running turn is aborted with cause ``disposed``; its input
stays in the durable inbox) and gives their sessions up.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import os
import signal
import sys

from dsh_agent import SessionAgentFactory, Worker
from dsh_session import open_store

HELP = "serve the sessions of a store that have mailbox input (see 'Run agents as a service')"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        required=True,
        metavar="URL",
        help="the store: sqlite:///path.db, jsonl:///dir or postgresql://... "
        "(four slashes for an absolute path)",
    )
    parser.add_argument(
        "--agent",
        required=True,
        metavar="MODULE:FACTORY",
        help="the function that builds a session's AgentLoop: factory(session, store)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=16, help="sessions served at once (default 16)"
    )
    parser.add_argument(
        "--idle-release",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="give a session up after it has been idle this long (default 2)",
    )


def load_factory(spec: str, command: str = "dsh worker") -> SessionAgentFactory:
    """Import ``module:attribute``; refuse anything that is not a callable (the
    message names ``command``)."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise SystemExit(f"{command}: --agent must be module:factory, not {spec!r}")
    if "" not in sys.path:
        sys.path.insert(0, "")  # the current directory, as `python -m` has it
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise SystemExit(f"{command}: cannot load --agent {spec!r}: {error}") from None
    if not callable(factory):
        raise SystemExit(f"{command}: --agent {spec!r} is not callable")
    built: SessionAgentFactory = factory
    return built


def run(args: argparse.Namespace) -> int:
    factory = load_factory(args.agent)
    asyncio.run(_serve(args.store, factory, args.concurrency, args.idle_release))
    return 0


async def _serve(url: str, factory: SessionAgentFactory, concurrency: int, idle: float) -> None:
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    async with (
        open_store(url) as store,
        Worker(store, factory, concurrency=concurrency, idle_release=idle),
    ):
        print(f"dsh worker: serving {url} (pid {os.getpid()})", flush=True)
        with contextlib.suppress(asyncio.CancelledError):
            await stopping.wait()
    print("dsh worker: stopped", flush=True)


__all__ = ["HELP", "add_arguments", "load_factory", "run"]
