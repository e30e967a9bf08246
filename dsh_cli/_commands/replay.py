"""``dsh replay SESSION --agent module:factory``: run a stored session again against
today's code (:func:`dsh_agent.testing.replay`) and say whether every request is the
recorded one, or which request first differs and how.

``factory`` is a function ``(session, adapter) -> AgentLoop`` in an importable module
(the working directory is searched first). The store is opened read-only and the
replay runs in memory: nothing is written anywhere. The exit status is 0 when the
replay matches the recording and 1 when it does not.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys

from dsh_agent.testing import ReplayAgentFactory, replay
from dsh_cli._commands.output import print_json, stdout_console
from dsh_cli._commands.session_ids import ID_HELP, resolve_session_id
from dsh_cli._commands.storage import add_json_argument, add_store_argument
from dsh_session import open_store

HELP = "replay a stored session against today's code and show the first difference"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The session, the agent factory and the replay's options."""
    add_store_argument(parser)
    add_json_argument(parser, "the result")
    parser.add_argument("session", help=f"the recorded session: {ID_HELP}")
    parser.add_argument(
        "--agent",
        required=True,
        metavar="MODULE:FACTORY",
        help="the function (session, adapter) -> AgentLoop that builds today's agent",
    )
    parser.add_argument(
        "--tools",
        choices=("recorded", "live"),
        default="recorded",
        help="answer tool calls with their recorded results (default) or run the tools",
    )
    parser.add_argument(
        "--until", type=int, metavar="SEQ", help="replay only the inputs logged before SEQ"
    )


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_replay(args))


async def _replay(args: argparse.Namespace) -> int:
    factory = load_factory(args.agent)
    async with open_store(args.store, mode="read") as store:
        session_id = await resolve_session_id(store, args.session)
        recorded, _ = await store.read(session_id)
    result = await replay(recorded, factory, tools=args.tools, until=args.until)
    difference = result.first_difference
    if args.json:
        print_json(
            {
                "ok": result.ok,
                "requests": result.requests,
                "recordedRequests": result.recorded_requests,
                "firstDifference": None if difference is None else str(difference),
                "messageIds": [] if difference is None else list(difference.message_ids),
            }
        )
    else:
        stdout_console().print(str(result))
    return 0 if result.ok else 1


def load_factory(spec: str) -> ReplayAgentFactory:
    """The function ``module:name`` names (the working directory searched first)."""
    module_name, colon, name = spec.partition(":")
    if not colon or not module_name or not name:
        raise ValueError(f"--agent {spec!r}: expected MODULE:FACTORY, e.g. my_agent:build")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"--agent {spec!r}: cannot import {module_name!r}: {error}") from error
    factory = getattr(module, name, None)
    if not callable(factory):
        raise ValueError(f"--agent {spec!r}: {module_name!r} has no function {name!r}")
    return factory  # type: ignore[no-any-return]


__all__ = [
    "HELP",
    "add_arguments",
    "load_factory",
    "run",
]
