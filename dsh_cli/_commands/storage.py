"""The store options every store-reading command shares, and loading a session by id.

The default store is the SQLite file ``dsh.db`` in the working directory: the file
``dsh demo`` and ``dsh chat`` write, so ``dsh sessions ...`` finds their sessions
without options. ``--store`` takes a URL or a bare path (:mod:`.store_option`).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from dsh_cli._commands.output import progress
from dsh_cli._commands.session_ids import no_session, resolve_session_id
from dsh_cli._errors import UnreadableSessionError
from dsh_session import (
    LoadReport,
    Session,
    SessionCorruptError,
    SessionFormatError,
    SessionNotFoundError,
    SessionStore,
)

DEFAULT_STORE_URL = "sqlite:///dsh.db"
"""Where sessions are kept unless ``--store`` says otherwise."""


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """``--store STORE``, defaulting to :data:`DEFAULT_STORE_URL`."""
    parser.add_argument(
        "--store",
        default=DEFAULT_STORE_URL,
        metavar="STORE",
        help="session store: a path (an existing folder, or a new one without a .db, "
        ".sqlite or .sqlite3 suffix, is a JSONL store; a file is SQLite) or a URL: "
        "sqlite:///file.db, jsonl:///dir, memory://, postgresql://... "
        f"(four slashes for an absolute path; default {DEFAULT_STORE_URL})",
    )


def add_json_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """``--json``: print ``what`` as JSON instead of a terminal rendering."""
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON")


async def load_session(store: SessionStore, given: str) -> Session:
    """Load the session ``given`` names (full id or prefix) to continue it (validated
    and, after a crash, repaired by the store, which makes the repair durable),
    showing progress while a large log loads."""
    session_id = await resolve_session_id(store, given)
    with progress(f"loading session {session_id}"), _unreadable(store, given, session_id):
        return await store.load(session_id)


async def read_session(store: SessionStore, given: str) -> tuple[Session, LoadReport]:
    """Read the session ``given`` names for inspection: validated and repaired in
    memory only, so a chat that is still writing the session is never disturbed."""
    session_id = await resolve_session_id(store, given)
    with progress(f"reading session {session_id}"), _unreadable(store, given, session_id):
        return await store.read(session_id)


@contextmanager
def _unreadable(store: SessionStore, given: str, session_id: str) -> Iterator[None]:
    try:
        yield
    except SessionNotFoundError:
        raise no_session(store, given) from None
    except (SessionCorruptError, SessionFormatError) as error:
        raise UnreadableSessionError(
            f"session {session_id!r} in {store!r} cannot be loaded: {error}"
        ) from error


__all__ = [
    "DEFAULT_STORE_URL",
    "add_json_argument",
    "add_store_argument",
    "load_session",
    "read_session",
]
