"""Naming a stored session on the command line: its full id, or enough of its start.

Every command that takes a session (``dsh sessions ...``, ``dsh chat --session``)
resolves what was typed with the store's own resolver
(:meth:`~dsh_session.SessionStore.resolve_session_id`), so a prefix means the same
everywhere and an ambiguous one is the same single error line listing the ids it
could mean. A full id that no listing shows is still read, so a session whose header
is too damaged to be listed is reported as damaged, not as missing.
"""

from __future__ import annotations

from dsh_cli._errors import SessionIdError
from dsh_session import SessionError, SessionNotFoundError, SessionStore, validate_session_id

ID_HELP = "the session id, or enough of its start to name one session"


async def resolve_session_id(store: SessionStore, given: str) -> str:
    """The stored session ``given`` names: a listed full id, the one listed id it
    starts, or ``given`` itself when it could be a full id that is not listed.
    Raises :class:`~dsh_session.AmbiguousSessionIdError` or :class:`SessionIdError`."""
    try:
        return await store.resolve_session_id(given)
    except SessionNotFoundError:
        try:
            return validate_session_id(given)
        except SessionError:
            raise no_session(store, given) from None


def no_session(store: SessionStore, given: str) -> SessionIdError:
    """The error for an id that names no stored session."""
    return SessionIdError(f"no session in {store!r} has the id or id prefix {given!r}")


__all__ = [
    "ID_HELP",
    "no_session",
    "resolve_session_id",
]
