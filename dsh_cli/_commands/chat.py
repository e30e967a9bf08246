"""``dsh chat``: a stored, resumable conversation with a real model.

The provider adapter is built from the options (the API key comes from an environment
variable, never from the command line, where other users could read it). At a
terminal (input and output both) the chat is interactive (:mod:`.chat_terminal`);
otherwise, e.g. with piped input or output, it runs one prompt per line
(:mod:`.chat_script`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any
from urllib.parse import urlsplit

from rich.text import Text

from dsh_agent import AgentLoop
from dsh_cli._commands.chat_approvals import pending_note
from dsh_cli._commands.chat_imports import load_deps, load_tools
from dsh_cli._commands.chat_script import chat_from_lines
from dsh_cli._commands.chat_settings import add_settings_arguments, model_settings
from dsh_cli._commands.output import stderr_console
from dsh_cli._commands.session_ids import ID_HELP
from dsh_cli._commands.storage import add_store_argument, load_session
from dsh_cli._commands.store_option import shown_store, store_for
from dsh_cli._commands.summary import summarize
from dsh_cli._errors import ChatSetupError
from dsh_llm import ModelAdapter
from dsh_session import Session

HELP = "chat with a model: type while it answers to steer, Ctrl-C cancels the turn"

API_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""Where each provider's API key is read from unless ``--api-key-env`` names another."""

HOSTED_API_HOSTS = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}
"""The provider's own hosted endpoint, the one place ``dsh chat`` insists on a key
(docs/decisions/2026-12-02-chat-api-key-for-local-servers.md)."""

NO_KEY = "no-key"
"""Sent to a server of one's own that needs no key: the provider SDKs refuse to build
a client without one."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--provider", required=True, choices=sorted(API_KEY_VARIABLES), help="which API to talk to"
    )
    parser.add_argument("--model", required=True, help="the provider's model name")
    parser.add_argument(
        "--base-url", metavar="URL", help="the API endpoint (for compatible servers)"
    )
    parser.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the API key "
        "(default OPENAI_API_KEY or ANTHROPIC_API_KEY)",
    )
    parser.add_argument("--system", metavar="TEXT", help="a system prompt")
    parser.add_argument(
        "--tools",
        metavar="MODULE:NAME",
        help="offer the tools NAME holds in MODULE; those declared requires_approval "
        "run only once approved (y/n, /approve CALL, /deny CALL [REASON])",
    )
    parser.add_argument(
        "--deps",
        metavar="MODULE:NAME",
        help="the tools' dependencies (ctx.deps): what the function NAME in MODULE "
        "returns, called once with no arguments (an async def is awaited)",
    )
    parser.add_argument(
        "--connect-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="give up on a model request (as a TIMEOUT, retried) when the connection "
        "to the server takes longer than this to open (default 10)",
    )
    parser.add_argument(
        "--first-chunk-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="give up on a model request (as a TIMEOUT, retried) when its first data "
        "takes longer than this (default 60); covers a server that accepts the "
        "connection and never answers",
    )
    add_store_argument(parser)
    parser.add_argument("--session", metavar="ID", help=f"resume a stored session: {ID_HELP}")
    add_settings_arguments(parser)


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse reports a ValueError as usage)."""
    value = float(text)
    if not 0 < value < float("inf"):
        raise ValueError(text)
    return value


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_chat(args))


def build_adapter(
    provider: str,
    base_url: str | None,
    api_key_env: str | None,
    *,
    connect_timeout: float | None = None,
    first_chunk_timeout: float | None = None,
) -> ModelAdapter:
    """The provider's adapter, with the API key read from the environment. A missing
    key is an error only for the provider's hosted API (no ``--base-url``, or one on
    its host): a local server usually needs none. A timeout left unset keeps the
    adapter's default."""
    variable = api_key_env or API_KEY_VARIABLES[provider]
    api_key = os.environ.get(variable) or None
    if api_key is None and not needs_api_key(provider, base_url):
        api_key = NO_KEY
    if api_key is None:
        raise ChatSetupError(
            f"the environment variable {variable} holding the {provider} API key is not set "
            "(name another one with --api-key-env)"
        )
    timeouts = {"connect_timeout": connect_timeout, "first_chunk_timeout": first_chunk_timeout}
    options: dict[str, Any] = {key: value for key, value in timeouts.items() if value is not None}
    try:
        if provider == "anthropic":
            from dsh_llm.providers import AnthropicAdapter

            return AnthropicAdapter(base_url=base_url, api_key=api_key, **options)
        from dsh_llm.providers import OpenAIChatAdapter

        return OpenAIChatAdapter(base_url=base_url, api_key=api_key, **options)
    except ImportError as error:  # the provider's SDK is an optional extra
        raise ChatSetupError(str(error)) from error


def needs_api_key(provider: str, base_url: str | None) -> bool:
    """Whether ``base_url`` is the provider's hosted API (the default when unset)."""
    return base_url is None or urlsplit(base_url).hostname == HOSTED_API_HOSTS[provider]


async def _converse(agent: AgentLoop, *, recap: bool) -> int:
    """Chat over ``agent``: interactively at a terminal (after a recap of a resumed
    session's last exchanges), else one prompt per line of standard input."""
    waiting = pending_note(agent.pending_approvals)
    if waiting is not None:
        stderr_console().print(Text(waiting, style="yellow"))
    if sys.stdin.isatty() and sys.stdout.isatty():
        # Imported here: prompt_toolkit costs about a third of a second of start-up,
        # paid by every piped chat and every other subcommand otherwise.
        from dsh_cli._commands.chat_terminal import TerminalChat

        return await TerminalChat(agent, recap=recap).run()
    return await chat_from_lines(agent, sys.stdin)


async def _chat(args: argparse.Namespace) -> int:
    adapter = build_adapter(
        args.provider,
        args.base_url,
        args.api_key_env,
        connect_timeout=args.connect_timeout,
        first_chunk_timeout=args.first_chunk_timeout,
    )
    tools = load_tools(args.tools) if args.tools else ()
    deps = await load_deps(args.deps) if args.deps else None
    notes = stderr_console()
    async with store_for(args.store, "create") as store:
        if args.session is None:
            session = Session.create()
            notes.print(Text(f"new session {session.id} in {shown_store(args.store)}"))
        else:
            session = await load_session(store, args.session)
            summary = summarize(session)
            notes.print(
                Text(
                    f"resumed session {session.id}: {summary.turns} turns, "
                    f"{summary.messages} messages"
                )
            )
        agent = AgentLoop(
            session=session,
            adapter=adapter,
            provider=args.provider,
            model=args.model,
            system=args.system,
            store=store,
            tools=tools,
            deps=deps,
            model_settings=model_settings(args),
        )
        try:
            status = await _converse(agent, recap=args.session is not None)
        finally:
            # The agent is closed before the store, on every way out, Ctrl-C included,
            # so its last flush finds the store open. A new session in which nothing
            # was said is left out of the store instead (closing would store its header).
            if session.seq or args.session is not None:
                await agent.aclose()
            else:
                store.detach(session)
        return status


__all__ = [
    "API_KEY_VARIABLES",
    "HELP",
    "HOSTED_API_HOSTS",
    "NO_KEY",
    "add_arguments",
    "build_adapter",
    "needs_api_key",
    "run",
]
