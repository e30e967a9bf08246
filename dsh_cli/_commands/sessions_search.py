"""``dsh sessions search QUERY`` and ``dsh sessions reindex``: full-text search over the
stored sessions, and rebuilding the search index from the logs.

``search`` opens the store read-only: it uses the store's index when that is up to date
and scans the logs otherwise, so it changes nothing. ``reindex`` opens the store for
writing and rebuilds the index from the logs alone (a JSONL or memory store has no
index: it searches by scanning, and there is nothing to rebuild).
"""

from __future__ import annotations

import argparse

from dsh_cli._commands.output import print_json, stdout_console
from dsh_cli._commands.session_ids import ID_HELP, resolve_session_id
from dsh_session import open_store

SEARCH_HELP = 'search the stored messages (words, "phrases", prefix*, AND/OR/NOT)'
REINDEX_HELP = "rebuild the search index from the logs"


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """The query and what narrows it."""
    parser.add_argument("query", help="the query, e.g. 'zebra OR \"lazy dog\"'")
    parser.add_argument("--session", metavar="ID", help=f"search one session: {ID_HELP}")
    parser.add_argument("--role", choices=("user", "assistant"), help="only messages of this role")
    parser.add_argument("--limit", type=int, default=20, help="at most this many hits (default 20)")


async def search(args: argparse.Namespace) -> int:
    """Print the hits, best first: where each message is, then its snippet."""
    async with open_store(args.store, mode="read") as store:
        session_id = None if args.session is None else await resolve_session_id(store, args.session)
        hits = await store.search(
            args.query, session_id=session_id, role=args.role, limit=args.limit
        )
    if args.json:
        print_json(
            [
                {
                    "sessionId": hit.session_id,
                    "seq": hit.seq,
                    "messageId": hit.message_id,
                    "role": hit.role,
                    "snippet": hit.snippet,
                }
                for hit in hits
            ]
        )
        return 0
    console = stdout_console()
    if not hits:
        console.print(f"no message matches {args.query!r}")
    for hit in hits:
        console.print(f"{hit.session_id}  seq {hit.seq}  {hit.role}  {hit.message_id}")
        console.print(f"    {hit.snippet}")
    return 0


async def reindex(args: argparse.Namespace) -> int:
    """Rebuild the index; one line says how many messages it holds."""
    async with open_store(args.store, mode="open") as store:
        indexed = await store.reindex()
    console = stdout_console()
    if indexed == 0:
        console.print(f"{args.store} has no search index to rebuild (it searches by scanning)")
    else:
        console.print(f"indexed {indexed} messages in {args.store}")
    return 0


__all__ = [
    "REINDEX_HELP",
    "SEARCH_HELP",
    "add_search_arguments",
    "reindex",
    "search",
]
