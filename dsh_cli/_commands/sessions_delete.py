"""``dsh sessions delete ID [--yes]``: remove a stored session for good.

It asks first. At a terminal it shows what would go and deletes only after ``y``
(any other answer deletes nothing and is not an error);
when standard input is not a terminal it refuses unless ``--yes`` says the caller
means it, so a script never deletes because a prompt happened to read a line meant
for something else. The store itself refuses while a writer (a running ``dsh chat``)
owns the session, and removes the session all or nothing. Forks of the session keep
their own copy of what they took and stay
(docs/decisions/2026-12-03-session-delete.md).
"""

from __future__ import annotations

import argparse
import sys

from dsh_cli._commands.output import stdout_console
from dsh_cli._commands.render import format_time
from dsh_cli._commands.session_ids import ID_HELP, no_session, resolve_session_id
from dsh_cli._commands.storage import read_session
from dsh_cli._commands.store_option import shown_store, store_for
from dsh_cli._commands.summary import summarize
from dsh_cli._errors import DeleteNotConfirmedError, SessionIdError, UnreadableSessionError
from dsh_session import SessionError, SessionNotFoundError, SessionStore

HELP = "delete a stored session for good (asks first unless --yes)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The session to delete, and ``--yes``."""
    parser.add_argument("id", help=f"the session to delete: {ID_HELP}")
    parser.add_argument(
        "--yes", "-y", action="store_true", help="delete without asking (needed without a terminal)"
    )


async def delete(args: argparse.Namespace) -> int:
    """Resolve the id, confirm, delete; one line says what went (or that nothing did:
    declining is an answer, not a failure, so the status is 0)."""
    shown = shown_store(args.store)
    async with store_for(args.store, "open") as store:
        # a full id even when the session is not listed (a damaged header), since
        # removing it is the remedy
        session_id = await resolve_session_id(store, args.id)
        if not args.yes and not _confirm(session_id, await _describe(store, session_id)):
            stdout_console().print(f"nothing deleted: session {session_id} stays in {shown}")
            return 0
        try:
            await store.delete(session_id)
        except SessionNotFoundError:
            raise no_session(store, args.id) from None
    stdout_console().print(f"deleted session {session_id} from {shown}")
    return 0


async def _describe(store: SessionStore, session_id: str) -> str:
    """What the session holds, and which forks of it stay, for the question."""
    try:
        session, _ = await read_session(store, session_id)
    except SessionIdError:
        raise
    except (SessionError, UnreadableSessionError) as error:
        what = f"it cannot be loaded: {error}"
    else:
        summary = summarize(session)
        what = (
            f"created {format_time(session.header.created_at)}, {summary.turns} turns, "
            f"{summary.messages} messages"
        )
    forks = [h.id for h in await store.list_sessions() if h.parent_session == session_id]
    if forks:
        what += f"; its forks {', '.join(forks)} keep their copy and stay"
    return what


def _confirm(session_id: str, description: str) -> bool:
    """Ask at the terminal whether to delete; refuse without one (an error: the caller
    must say ``--yes``). True only for a yes."""
    if not sys.stdin.isatty():
        raise DeleteNotConfirmedError(
            f"not deleting session {session_id} without confirmation: standard input is "
            "not a terminal to ask at; pass --yes to delete it"
        )
    sys.stderr.write(f"delete session {session_id} ({description}) for good? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


__all__ = [
    "HELP",
    "add_arguments",
    "delete",
]
