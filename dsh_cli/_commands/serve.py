"""``dsh serve``: the HTTP API and live AG-UI streams of a store's sessions
(``dsh_agent.web``, the ``web`` extra), with an in-process worker running the turns
unless ``--no-worker`` leaves them to ``dsh worker`` processes.

Safe by default: it binds 127.0.0.1; with ``--token`` every API request needs
``Authorization: Bearer <token>`` (the chat page at ``/`` takes it from the URL
fragment, so the URL printed at start carries it). ``--demo`` serves the demo's offline
assistant on a local store: the web chat with no model, key or network.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import webbrowser
from urllib.parse import quote

from dsh_agent import AgentLoop, SessionAgentFactory
from dsh_cli._commands.demo import MODEL, PROVIDER, SYSTEM
from dsh_cli._commands.demo_assistant import DEMO_TOOLS, demo_model
from dsh_cli._commands.storage import DEFAULT_STORE_URL
from dsh_cli._commands.worker import load_factory
from dsh_llm import ToolCallBlock
from dsh_llm.testing import FunctionAdapter
from dsh_session import Session, SessionStore, open_store

HELP = "serve a store's sessions over HTTP and Server-Sent Events (the 'web' extra)"

_INSTALL = "pip install 'dsh-sdk[web]'"

_RUNNERS = {"--agent": "agent", "--demo": "demo", "--no-worker": "no_worker"}
"""Who runs the turns: exactly one is given."""

DEMO_DELAY = 0.05
"""Seconds before each streamed chunk of the demo model."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="URL",
        help="the store: sqlite:///path.db, jsonl:///dir or postgresql://... "
        f"(four slashes for an absolute path); required unless --demo ({DEFAULT_STORE_URL})",
    )
    parser.add_argument(
        "--agent",
        metavar="MODULE:FACTORY",
        help="the function that builds a session's AgentLoop: factory(session, store); "
        "required unless --no-worker or --demo",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="serve the demo's offline assistant (weather and sums; a sum asks for approval)",
    )
    parser.add_argument("--open", action="store_true", help="open the chat in a web browser")
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
        "--concurrency",
        type=int,
        default=16,
        help="turns this server's worker runs at once (default 16; as 'dsh worker')",
    )
    parser.add_argument(
        "--max-body",
        type=int,
        default=1 << 20,
        metavar="BYTES",
        help="largest request body accepted (default 1 MiB)",
    )


def run(args: argparse.Namespace) -> int:
    if not (math.isfinite(args.keepalive) and args.keepalive > 0):
        raise SystemExit(
            f"dsh serve: --keepalive must be a positive number of seconds, not {args.keepalive}"
        )
    if args.concurrency < 1:
        raise SystemExit(f"dsh serve: --concurrency must be at least 1, not {args.concurrency}")
    factory = _factory(args)
    store_url = args.store or DEFAULT_STORE_URL
    try:
        from dsh_agent import web
    except ImportError as error:
        raise SystemExit(f"dsh serve: needs the web extra ({error}): {_INSTALL}") from None

    async def serve() -> None:
        async with open_store(store_url) as store:
            app = web.create_app(
                store,
                factory,
                token=args.token,
                max_body=args.max_body,
                keepalive=args.keepalive,
                concurrency=args.concurrency,
            )
            await web.run_server(app, host=args.host, port=args.port, ready=announce)

    def announce(url: str) -> None:
        worker = "no worker" if factory is None else "with a worker"
        print(f"dsh serve: serving {store_url} at {url}, {worker} (pid {os.getpid()})", flush=True)
        chat = f"{url}/" if args.token is None else f"{url}/#token={quote(args.token, safe='')}"
        print(f"dsh serve: the chat is at {chat}", flush=True)
        if args.open:
            webbrowser.open(chat)

    asyncio.run(serve())
    print("dsh serve: stopped", flush=True)
    return 0


def _factory(args: argparse.Namespace) -> SessionAgentFactory | None:
    chosen = [name for name, given in _RUNNERS.items() if getattr(args, given)]
    if len(chosen) > 1:
        raise SystemExit(f"dsh serve: give only one of {', '.join(chosen)}")
    if not chosen:
        raise SystemExit("dsh serve: give --agent module:factory, --demo or --no-worker")
    if args.store is None and not args.demo:
        raise SystemExit("dsh serve: give --store URL (only --demo has a default store)")
    if args.no_worker:
        return None
    return demo_agent if args.demo else load_factory(args.agent, "dsh serve")


def _sums_need_approval(call: ToolCallBlock) -> bool | str:
    return "the demo asks before every calculation" if call.name == "calculate" else False


def demo_agent(session: Session, store: SessionStore) -> AgentLoop:
    """The demo's offline assistant (``dsh demo``'s), streaming word by word; its
    calculator asks for approval, so the chat shows that too."""
    return AgentLoop(
        session=session,
        store=store,
        adapter=FunctionAdapter(demo_model, delay=DEMO_DELAY),
        provider=PROVIDER,
        model=MODEL,
        system=SYSTEM,
        tools=DEMO_TOOLS,
        approval=_sums_need_approval,
    )


__all__ = ["DEMO_DELAY", "HELP", "add_arguments", "demo_agent", "run"]
