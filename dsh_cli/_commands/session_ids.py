"""Naming a stored session on the command line: its full id, or enough of its start.

Every command that takes a session (``dsh sessions ...``, ``dsh chat --session``)
resolves what was typed here, so a prefix means the same everywhere and an ambiguous
one is the same single error line listing the ids it could mean.
"""

from __future__ import annotations

from dsh_cli._errors import SessionIdError
from dsh_session import SessionStore

ID_HELP = "the session id, or enough of its start to name one session"

SHOWN_CANDIDATES = 3
"""How many of the ids an ambiguous prefix matches the error line names."""


async def resolve_session_id(store: SessionStore, given: str) -> str:
    """The stored session ``given`` names: its full id, or a prefix of exactly one id."""
    ids = [header.id for header in await store.list_sessions()]
    if given in ids:
        return given
    matches = tuple(session_id for session_id in ids if given and session_id.startswith(given))
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionIdError(
            f"no session in {store} has the id or id prefix {given!r}", given=given, matches=()
        )
    shown = ", ".join(matches[:SHOWN_CANDIDATES])
    if len(matches) > SHOWN_CANDIDATES:
        shown += ", …"
    raise SessionIdError(
        f"{given!r} is the start of {len(matches)} session ids in {store} ({shown}); "
        "give more of it",
        given=given,
        matches=matches,
    )


__all__ = [
    "ID_HELP",
    "SHOWN_CANDIDATES",
    "resolve_session_id",
]
