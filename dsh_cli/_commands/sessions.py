"""``dsh sessions list|show|verify|fork|export|delete``: the stored sessions, read from a store.

Every action opens the store named by ``--store`` (default: ``dsh.db`` here) and reads
sessions through it, so what they show is what an agent resuming the session would
see: validated, and repaired (in memory) if a crash cut the log. The store must exist:
the reading actions open it read-only and ``fork`` writes only its new session into it,
so a missing store, a mistyped path or a file that is not a dsh store is one error line
and nothing is created or changed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console, OverflowMethod
from rich.text import Text

from dsh_agent import usage_of
from dsh_cli._commands import sessions_delete, sessions_search
from dsh_cli._commands.failures import add_debug_argument
from dsh_cli._commands.output import print_json, progress, stderr_console, stdout_console
from dsh_cli._commands.rebuild import rebuild_requests, request_table
from dsh_cli._commands.render import (
    TranscriptPrinter,
    describe_attachment,
    format_time,
    short_id,
)
from dsh_cli._commands.session_ids import ID_HELP
from dsh_cli._commands.storage import add_json_argument, add_store_argument, read_session
from dsh_cli._commands.store_option import named_as_typed, shown_store, store_for
from dsh_cli._commands.summary import PROMPT_PREVIEW_WIDTH, SessionSummary, summarize
from dsh_cli._commands.terminal_text import escape_json_controls
from dsh_llm import AttachmentRef, DshError
from dsh_session import Session, SessionError, SessionHeader, SessionStore
from dsh_session.stores._attachments import message_attachments
from dsh_session.stores._jsonl_form import harness_header_line

Action = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]

HELP = "list, show, verify, fork, export, delete, search or reindex stored sessions"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``sessions`` actions and their options."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help: str, run: Action, json_what: str | None) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help, description=help)
        add_debug_argument(sub)
        add_store_argument(sub)
        if json_what is not None:
            add_json_argument(sub, json_what)
        sub.set_defaults(action_run=run)
        return sub

    action("list", "list the stored sessions", _list, "an array of session summaries")
    show = action("show", "show a session's transcript", _show, "the session's events (wire form)")
    show.add_argument("id", help=ID_HELP)
    verify = action(
        "verify", "validate a session's log and re-build every request", _verify, "the report"
    )
    verify.add_argument("id", help=ID_HELP)
    fork = action("fork", "start a new session from a prefix of one", _fork, "the new session")
    fork.add_argument("id", help=f"the session to fork: {ID_HELP}")
    fork.add_argument(
        "--at",
        type=int,
        metavar="SEQ",
        help="the last event to keep (inclusive; between turns); default: the whole log",
    )
    export = action("export", "write a session's log in its wire form", _export, None)
    export.add_argument("id", help=ID_HELP)
    export.add_argument(
        "--format", choices=("jsonl",), default="jsonl", help="output format (default: jsonl)"
    )
    export.add_argument(
        "--out", type=Path, metavar="FILE", help="write to FILE instead of standard output"
    )
    delete = action("delete", sessions_delete.HELP, sessions_delete.delete, None)
    sessions_delete.add_arguments(delete)
    search = action("search", sessions_search.SEARCH_HELP, sessions_search.search, "the hits")
    sessions_search.add_search_arguments(search)
    action("reindex", sessions_search.REINDEX_HELP, sessions_search.reindex, None)


def run(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    action: Action = args.action_run
    return asyncio.run(action(args))


# --- list ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Unloadable:
    """A stored session that failed to load, listed with the reason."""

    header: SessionHeader
    problem: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.header.id, "createdAt": self.header.created_at, "error": self.problem}


async def _summaries(
    store: SessionStore, typed: str, prompt_width: int | None
) -> list[SessionSummary | _Unloadable]:
    """A summary of each stored session, oldest first; a session that cannot be loaded
    is listed with the reason (naming the store as ``typed``) instead of failing the
    whole list."""
    headers = await store.list_sessions()
    results: list[SessionSummary | _Unloadable] = []
    with progress("loading sessions") as status:
        for number, header in enumerate(headers, start=1):
            if status is not None:
                status.update(f"loading session {number}/{len(headers)}")
            try:
                session, _ = await store.read(header.id)
                results.append(summarize(session, prompt_width=prompt_width))
            except SessionError as error:
                results.append(_Unloadable(header, named_as_typed(str(error), typed, error)))
    return results


async def _list(args: argparse.Namespace) -> int:
    console = stdout_console()
    # At a terminal each session is one line cut at its width; piped, lines are whole
    # (the first prompt's whole first line), for grep and friends.
    cut = console.is_terminal
    width = PROMPT_PREVIEW_WIDTH if cut or args.json else None
    async with store_for(args.store, "read") as store:
        summaries = await _summaries(store, args.store, width)
    if args.json:
        print_json([item.to_json() for item in summaries])
        return 0
    if not summaries:
        console.print(f"no sessions in {shown_store(args.store)}")
        return 0
    overflow: OverflowMethod = "ellipsis" if cut else "ignore"
    id_width = max(len(item.header.id) for item in summaries)
    console.print(Text(f"sessions in {shown_store(args.store)}", style="bold"))
    columns = f"{'id':<{id_width}}  {'created':<16}  {'turns':>5}  {'msgs':>5}  first prompt"
    console.print(Text(columns, style="dim"), no_wrap=True, overflow=overflow, crop=cut)
    for item in summaries:
        start = (
            f"{item.header.id:<{id_width}}  {format_time(item.header.created_at, seconds=False)}"
        )
        if isinstance(item, _Unloadable):
            line = Text(start).append(f"  cannot load: {item.problem}", style="red")
        else:
            prompt = item.first_prompt
            if item.header.parent_session is not None:
                kind = "sub-agent of" if is_subagent(item.header) else "fork of"
                prompt = f"({kind} {short_id(item.header.parent_session)}) {prompt}"
            line = Text(f"{start}  {item.turns:>5}  {item.messages:>5}  {prompt}")
        console.print(line, no_wrap=True, overflow=overflow, crop=cut)
    return 0


# --- show ---------------------------------------------------------------------------------


async def _show(args: argparse.Namespace) -> int:
    async with store_for(args.store, "read") as store:
        session, _ = await read_session(store, args.id)
        headers = [] if args.json else await store.list_sessions()
    if args.json:
        print_json([event.model_dump(mode="json") for event in session.events])
        return 0
    console = stdout_console()
    header = session.header
    title = Text.assemble(("session ", "bold"), (header.id, "bold"))
    title.append(f"  created {format_time(header.created_at)}", style="dim")
    if header.parent_session is not None:
        title.append(f"  {describe_fork(header)}", style="dim")
    console.print(title)
    for child in headers:
        if child.parent_session == session.id:
            link = (
                f"  sub-agent: session {child.id}"
                if is_subagent(child)
                else f"  branch: session {child.id}, forked {describe_seed(child)}"
            )
            console.print(Text(link, "dim"))
    TranscriptPrinter(console, live=False).print_events(session.events)
    print_attachments(console, session)
    used = usage_of(session.events)
    console.print(
        Text(
            f"usage: {used.requests} requests, {used.input_tokens} input tokens "
            f"({used.cache_read_tokens} cached), {used.output_tokens} output tokens, "
            f"{used.tool_calls} tool calls",
            "dim",
        )
    )
    return 0


def print_attachments(console: Console, session: Session) -> None:
    """List each attachment the log's messages hold once, with the messages holding it
    (their bytes are in the store, checked when the session was read)."""
    holders: dict[str, tuple[AttachmentRef, list[str]]] = {}
    for message, ref in message_attachments(session.events):
        ids = holders.setdefault(ref.attachment_id, (ref, []))[1]
        if message.id not in ids:
            ids.append(message.id)
    if not holders:
        return
    total = sum(ref.size for ref, _ in holders.values())
    console.print(Text(f"attachments: {len(holders)} ({total} bytes, stored once each)", "bold"))
    for ref, ids in holders.values():
        console.print(Text(f"  {describe_attachment(ref)}"))
        console.print(Text(f"    {ref.attachment_id}", "dim"), overflow="fold")
        console.print(Text(f"    in {', '.join(ids)}", "dim"))


def is_subagent(header: SessionHeader) -> bool:
    """Whether the session is a sub-agent's (the harness's ``origin: "subagent"``, which
    ``dsh_agent.agent_tool`` writes), not a fork: both name a ``parentSession``."""
    return getattr(header, "origin", None) == "subagent"


def describe_fork(header: SessionHeader) -> str:
    """Where a forked session came from: its parent and the seq it was cut after; a
    sub-agent's session names the session that delegated to it."""
    if is_subagent(header):
        return f"sub-agent of session {header.parent_session}"
    return f"forked from session {header.parent_session} {describe_seed(header)}"


def describe_seed(header: SessionHeader) -> str:
    last = (header.seed_length or 0) - 1
    return f"at seq {last}" if last >= 0 else "before its first event"


# --- verify -------------------------------------------------------------------------------


async def _verify(args: argparse.Namespace) -> int:
    opened = store_for(args.store, "read")  # a missing store is not a verdict on a log
    try:
        async with opened as store:
            session, report = await read_session(store, args.id)
        # Moved out of the collector's generations while the requests are rebuilt, a
        # long log's millions of objects are not walked again by the full collections
        # the rebuild's allocations would trigger (4 s at 1M events). Skipped when the
        # caller's process froze objects itself, whose freeze it must not undo.
        freezing = gc.get_freeze_count() == 0
        if freezing:
            gc.freeze()
        try:
            with progress(f"re-building the requests of {session.id}"):
                rebuilt = rebuild_requests(session.events)
        finally:
            if freezing:
                gc.unfreeze()
    except DshError as error:
        if not args.json:
            raise
        problem = named_as_typed(str(error), args.store, error)
        print_json({"id": args.id, "valid": False, "error": problem})
        return 1
    notes = []
    if report.torn_tail is not None:
        notes.append(report.torn_tail.describe())
    if report.repaired:
        closers = sum(event.type != "session/end-seed" for event in report.appended)
        notes.append(f"a crash had left a turn open; load closed it with {closers} event(s)")
    if args.json:
        print_json(
            {
                "id": session.id,
                "valid": True,
                "events": session.seq,
                "turns": session.last_turn,
                "repairs": notes,
                "requests": [item.to_json() for item in rebuilt],
            }
        )
        return 0
    console = stdout_console()
    console.print(
        Text.assemble(
            ("✓ ", "green"),
            f"session {session.id}: the log is valid ({session.seq} events, "
            f"{session.last_turn} turns); {len(rebuilt)} requests rebuilt from it",
        )
    )
    for note in notes:
        console.print(Text(f"  repaired on load: {note}", style="yellow"))
    if rebuilt:
        console.print(request_table(rebuilt))
    return 0


# --- fork ---------------------------------------------------------------------------------


async def _fork(args: argparse.Namespace) -> int:
    async with store_for(args.store, "open") as store:
        parent, _ = await read_session(store, args.id)
        child = parent.fork(args.at)
        store.attach(child)
        await store.flush(child)
    summary = summarize(child)
    if args.json:
        print_json(summary.to_json())
        return 0
    stdout_console().print(
        f"forked {parent.id} (events 0..{(child.header.seed_length or 0) - 1}) "
        f"into new session {child.id}"
    )
    return 0


# --- export -------------------------------------------------------------------------------


def _write_jsonl(session: Session, out: TextIO) -> None:
    """The harness's plain ``session.jsonl`` (no packed rows): its header line, then
    one event per line, each in its wire form (DEL and C1 characters as JSON escapes,
    so the output is safe on a terminal and still the same JSON)."""
    out.write(escape_json_controls(harness_header_line(session.header)))
    out.write("\n")
    for event in session.events:
        out.write(escape_json_controls(event.model_dump_json()) + "\n")


async def _export(args: argparse.Namespace) -> int:
    async with store_for(args.store, "read") as store:
        session, _ = await read_session(store, args.id)
    if args.out is None:
        _write_jsonl(session, sys.stdout)
        return 0
    with args.out.open("w", encoding="utf-8") as out:
        _write_jsonl(session, out)
    stderr_console().print(f"wrote {session.seq} events of {session.id} to {args.out}")
    return 0


__all__ = [
    "HELP",
    "Action",
    "add_arguments",
    "describe_fork",
    "describe_seed",
    "run",
]
