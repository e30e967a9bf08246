"""``dsh serve``: the HTTP API and live AG-UI streams of a store's sessions
(``dsh_agent.web``, the ``web`` extra), with an in-process worker running the turns
unless ``--no-worker`` leaves them to ``dsh worker`` processes.

Safe by default: it binds 127.0.0.1; with ``--token`` every request needs
``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os

from dsh_cli._commands.worker import load_factory
from dsh_session import open_store

HELP = "serve a store's sessions over HTTP and Server-Sent Events (the 'web' extra)"

_INSTALL = "pip install 'dsh-sdk[web]'"


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
        metavar="MODULE:FACTORY",
        help="the function that builds a session's AgentLoop: factory(session, store); "
        "required unless --no-worker",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--token", help="require 'Authorization: Bearer TOKEN' on every request")
    parser.add_argument(
        "--no-worker",
        action="store_true",
        help="run no turns here: 'dsh worker' processes serve the mailbox",
    )
    parser.add_argument(
        "--keepalive",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="send an SSE comment on a stream idle this long (default 15)",
    )
    parser.add_argument(
        "--max-body",
        type=int,
        default=1 << 20,
        metavar="BYTES",
        help="largest request body accepted (default 1 MiB)",
    )


def run(args: argparse.Namespace) -> int:
    if args.agent is None and not args.no_worker:
        raise SystemExit("dsh serve: give --agent module:factory, or --no-worker")
    if not (math.isfinite(args.keepalive) and args.keepalive > 0):
        raise SystemExit(
            f"dsh serve: --keepalive must be a positive number of seconds, not {args.keepalive}"
        )
    factory = None if args.no_worker else load_factory(args.agent, "dsh serve")
    try:
        from dsh_agent import web
    except ImportError as error:
        raise SystemExit(f"dsh serve: needs the web extra ({error}): {_INSTALL}") from None

    async def serve() -> None:
        async with open_store(args.store) as store:
            app = web.create_app(
                store, factory, token=args.token, max_body=args.max_body, keepalive=args.keepalive
            )
            await web.run_server(app, host=args.host, port=args.port, ready=announce)

    def announce(url: str) -> None:
        worker = "no worker" if factory is None else "with a worker"
        print(f"dsh serve: serving {args.store} at {url}, {worker} (pid {os.getpid()})", flush=True)

    asyncio.run(serve())
    print("dsh serve: stopped", flush=True)
    return 0


__all__ = ["HELP", "add_arguments", "run"]
